"""Capability maps on Dask: process workers give the threaded map bit for bit on every robot
(mimic joints included), and schedulers that cannot be used fail in one reljac error, in bounded
time: another scheme, a listener that never answers, an unguarded script, a dying cluster, Ctrl-C."""

from __future__ import annotations

import concurrent.futures as cf
import functools
import gc
import os
import pickle
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import types
from pathlib import Path

import numpy as np
import pytest

import reljac
from reljac.exceptions import SchedulerError
from reljac.maps import capability_map, kernel

pytestmark = pytest.mark.slow

distributed = pytest.importorskip("distributed")
ENV = {**os.environ, "PYTHONWARNINGS": "ignore", "CI": "1"}
HANG_GUARD = 120  # [s] a call that has not returned by then hangs (the old behaviour): not a timing claim


ROBOTS = {  # name: (how to make it, frame a, frame b)
    "panda": (lambda: reljac.Robot.load("panda"), "panda_link0", "panda_hand"),
    "hand": (lambda: reljac.Robot.load("hand"), "palm", "thumb_tip"),
    "baxter": (lambda: reljac.Robot.load("baxter"), "base", "right_gripper"),
    "ur5": (lambda: reljac.Robot.load("ur5"), "base_link", "tool0"),
    "dual_arm": (lambda: reljac.Robot.bundled("dual_arm"), "left_tool", "right_tool"),
    "panda from a pin.Model": (lambda: reljac.Robot.from_pinocchio(robot("panda").model), "panda_link0",
                               "panda_hand"),
    "panda, fingers locked": (lambda: robot("panda").locked("panda_finger_joint1"), "panda_link0", "panda_hand"),
}


@functools.cache
def robot(name: str) -> reljac.Robot:
    return ROBOTS[name][0]()


def case(name: str) -> tuple[reljac.Robot, str, str]:
    return robot(name), ROBOTS[name][1], ROBOTS[name][2]


def test_an_unpickled_model_with_mimic_joints_is_what_crashed_the_workers():
    """The cause of the issue: the job used to carry the bare pin.Model, and the kinematics of an
    unpickled model with mimic joints kills the process (Pinocchio 4.1: here its joint Jacobians,
    which the maps' Python path computes)."""
    robot = case("panda")[0]
    assert robot.model.mimicking_joints
    code = ("import pickle, sys, pinocchio as pin; m = pickle.load(sys.stdin.buffer); "
            "pin.computeJointJacobians(m, m.createData(), pin.neutral(m))")
    proc = subprocess.run([sys.executable, "-c", code], input=pickle.dumps(robot.model), capture_output=True,
                          env=ENV, timeout=HANG_GUARD)
    if proc.returncode == 0:
        pytest.skip("this Pinocchio exports unpickled mimic joints")
    assert proc.returncode < 0  # killed by a signal (SIGSEGV), not an exception
    state = kernel.Job(robot, 0, 1, None, None, 2, (0, 1, 2), 0, "compiled").__getstate__()
    assert state["robot"] is None and state["_kinematics"][0] is None  # rebuilt from the URDF text instead


def test_a_job_ships_the_kinematics_only(tmp_path):
    """A Robot made from a pin.Model with its meshes pickles to ~250 MB: the job leaves the
    geometry behind and its robot computes the same kinematics."""
    panda = case("panda")[0]
    robot = reljac.Robot.from_pinocchio(panda.model, panda.collision_model, panda.visual_model)
    job = kernel.Job(robot, 1, 2, None, None, 2, (0, 1, 2), 0, "compiled")
    shipped = pickle.dumps(job)
    assert len(shipped) < 2**20
    copy = pickle.loads(shipped)
    q = panda.random_configuration(7)
    np.testing.assert_array_equal(reljac.relative_jacobian(copy.robot, q, "panda_link0", "panda_hand"),
                                  reljac.relative_jacobian(robot, q, "panda_link0", "panda_hand"))


@pytest.mark.parametrize("name", list(ROBOTS))
def test_process_workers_give_the_threaded_map_bit_for_bit(process_client, name):
    robot, a, b = case(name)
    args = dict(samples=6_000, voxel=0.015 if name == "hand" else 0.08, seed=3, chunk=1_500, directions=16)
    threaded = capability_map(robot, a, b, workers=2, **args)
    on_processes = capability_map(robot, a, b, scheduler=process_client, **args)
    assert threaded.reached.sum() > 20
    assert on_processes == threaded  # metadata and every array, bit for bit


def test_a_cluster_failing_outside_a_task_is_one_scheduler_error(thread_client, monkeypatch):
    robot, a, b = case("dual_arm")

    def lost(*args, **kwargs):
        raise distributed.client.FutureCancelledError("run_chunk-123", reason="lost dependencies")

    monkeypatch.setattr(thread_client, "scatter", lost)
    with pytest.raises(SchedulerError, match=r"the Dask cluster failed during the map \(FutureCancelledError"):
        capability_map(robot, a, b, samples=500, voxel=0.2, scheduler=thread_client)


def test_the_callers_own_progress_error_is_not_renamed(thread_client):
    robot, a, b = case("dual_arm")

    class Stop(Exception):
        pass

    def progress(done, total):
        raise Stop

    with pytest.raises(Stop):
        capability_map(robot, a, b, samples=500, voxel=0.2, chunk=100, scheduler=thread_client, progress=progress)
    # the map stopped midway leaves nothing behind: the same map on the same client works at once
    again = capability_map(robot, a, b, samples=500, voxel=0.2, chunk=100, scheduler=thread_client)
    assert again == capability_map(robot, a, b, samples=500, voxel=0.2, chunk=100)


# ----------------------------------------------------------------------------- addresses
@pytest.fixture
def silent_listener():
    """A TCP listener on 127.0.0.1 that accepts connections and never answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    accepted, stop = [], threading.Event()

    def accept():
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                accepted.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1], accepted
    stop.set()
    thread.join()
    for conn in accepted:
        conn.close()
    server.close()


def _bounded(call):
    """call() on a thread; its result or exception, failing the test if it has not returned in HANG_GUARD s."""
    pool = cf.ThreadPoolExecutor(max_workers=1)
    try:
        return pool.submit(call).result(timeout=HANG_GUARD)
    except cf.TimeoutError:
        pytest.fail(f"still waiting on the scheduler after {HANG_GUARD} s")
    finally:
        pool.shutdown(wait=False)  # a hung call is left behind, not waited for


def test_a_listener_that_never_answers_is_one_scheduler_error(silent_listener):
    port, accepted = silent_listener
    robot, a, b = case("dual_arm")
    address = f"tcp://127.0.0.1:{port}"

    def call():
        with pytest.raises(SchedulerError, match=rf"no Dask scheduler answered at '{address}' within 0.5 s"):
            capability_map(robot, a, b, samples=100, voxel=0.2, scheduler=address, connect_timeout=0.5)

    _bounded(call)
    assert accepted  # it did connect: the wait for an answer was what had no bound


@pytest.mark.parametrize("address", ["http://127.0.0.1:8787", "https://example.invalid:8786", "ftp://127.0.0.1:1"])
def test_another_scheme_is_refused_before_any_client_exists(address, capfd):
    robot, a, b = case("dual_arm")
    with pytest.raises(SchedulerError, match=r"is not a Dask scheduler address \(its scheme is \w+://.*use "
                                             r"tcp://HOST:PORT") as excinfo:
        _bounded(lambda: capability_map(robot, a, b, samples=100, voxel=0.2, scheduler=address))
    assert isinstance(excinfo.value, ValueError)  # a wrong value (was a SchedulerError only)
    gc.collect()  # a half-made distributed.Client printed a traceback from __del__ here
    err = capfd.readouterr().err
    assert "Client.__del__" not in err and "Traceback" not in err, err


def test_a_worker_address_is_not_a_scheduler(process_client):
    robot, a, b = case("dual_arm")
    process_client.wait_for_workers(1, timeout=60)  # (a worker an earlier test ended may be restarting)
    worker = next(iter(process_client.scheduler_info(n_workers=-1)["workers"]))
    with pytest.raises(SchedulerError, match="is a Dask Worker, not a Dask scheduler"):
        capability_map(robot, a, b, samples=100, voxel=0.2, scheduler=worker)


def test_the_scheduler_address_of_a_cluster_works(process_client):
    robot, a, b = case("panda")
    args = dict(samples=5_000, voxel=0.1, chunk=1_000, directions=8)
    by_address = capability_map(robot, a, b, scheduler=process_client.scheduler.address, **args)
    assert by_address == capability_map(robot, a, b, **args)


# ----------------------------------------------------------------------------- scripts and Ctrl-C
def run_as_main(path: Path, source: str) -> dict:
    """Run `source` as the __main__ script `path` in this process (what `python path` does,
    without starting an interpreter); returns its globals."""
    path.write_text(textwrap.dedent(source))
    module = types.ModuleType("__main__")
    module.__file__ = str(path)
    saved = sys.modules["__main__"]
    sys.modules["__main__"] = module
    try:
        exec(compile(path.read_text(), str(path), "exec"), module.__dict__)
    finally:
        sys.modules["__main__"] = saved
    return module.__dict__


def test_a_local_cluster_from_an_unguarded_script_says_what_to_do_in_one_line(tmp_path):
    script = tmp_path / "unguarded.py"

    def call():
        with pytest.raises(SchedulerError) as info:
            run_as_main(script, """\
                from reljac.maps import capability_map
                capability_map("dual_arm", "left_tool", "right_tool", samples=100, voxel=0.2, scheduler="local",
                               workers=2)
                """)
        return str(info.value)

    message = _bounded(call)  # the old code started workers that ran the script again, and hung
    assert message == (f"scheduler='local' starts worker processes that import {script} again and would run its "
                       'line 2 (this map) in each of them: put the code that runs the map under `if __name__ == '
                       '"__main__":` (see docs/guide/maps.md)')


def test_a_call_under_the_guard_or_in_a_function_it_calls_is_not_refused(tmp_path):
    from reljac.dask_client import unguarded_main_line

    found = run_as_main(tmp_path / "guarded.py", """\
        from reljac.dask_client import unguarded_main_line
        top = unguarded_main_line()
        def main():
            return unguarded_main_line()
        if "__main__" == __name__:
            guarded = main()
        """)
    assert found["top"] == (str(tmp_path / "guarded.py"), 2)
    assert found["guarded"] is None
    assert unguarded_main_line() is None  # pytest's own script runs this test under its guard


def test_ctrl_c_on_a_local_cluster_map_prints_one_line(tmp_path):
    """Ctrl-C goes to the whole process group, as from a terminal: the workers used to run the
    `reljac` program's start-up handler too, each printing `reljac: interrupted`."""
    program = tmp_path / "reljac"  # named like the installed program: its workers import it again
    program.write_text(textwrap.dedent("""\
        import sys
        import reljac.apps.capability as app
        compute = app.capability_map
        def announcing(*args, progress=None, **kwargs):
            def said(done, total):
                print("running", flush=True)
            return compute(*args, progress=said, **kwargs)
        app.capability_map = announcing
        from reljac.apps.cli import main
        if __name__ == "__main__":
            sys.exit(main())
        """))
    proc = subprocess.Popen([sys.executable, str(program), "map", "panda", "panda_link0", "panda_hand", "--samples",
                             str(10**9), "--chunk", "5000", "--voxel", "0.1", "--out", str(tmp_path / "m.npz"),
                             "--scheduler", "local", "--workers", "2", "--no-progress"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV, start_new_session=True)
    try:
        assert proc.stdout.readline() == "running\n"  # chunks are coming back from the workers
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=HANG_GUARD)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, err
    assert err == "reljac: interrupted\n", err


# ----------------------------------------------------------------------------- streaming chunks
def test_a_billion_chunks_of_one_are_streamed_not_listed(tmp_path):
    """samples=10**9, chunk=1 under a 3 GB address-space limit: a list of 10**9 chunks (~100 GB)
    fails with MemoryError at once; streamed, the first chunks come back."""
    code = textwrap.dedent("""\
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, resource.RLIM_INFINITY))
        from reljac.maps import capability_map
        class Enough(Exception):
            pass
        seen = []
        def progress(done, total):
            seen.append((done, total))
            if len(seen) == 5:
                raise Enough
        try:
            capability_map("planar_2link", "base_link", "tip", samples=10**9, chunk=1, voxel=0.1, workers=1,
                           progress=progress)
        except Enough:
            print(seen)
        """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=ENV, timeout=HANG_GUARD)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == str([(i, 10**9) for i in range(1, 6)])


def test_chunk_ranges_cover_the_samples_in_order():
    from reljac.maps.capability import chunk_ranges

    chunks = chunk_ranges(10, 4)
    assert not isinstance(chunks, (list, tuple)) and iter(chunks) is chunks
    assert list(chunks) == [(0, 4), (4, 8), (8, 10)]



@pytest.mark.parametrize("legs", ["locked", "drawn"])
def test_a_balance_aware_map_on_process_workers_is_the_threaded_one(process_client, legs):
    """The support and the held base's pose (from the SRDF, which a worker's robot lacks) travel
    with the job; each worker tests its samples' centre of mass alike."""
    from reljac import SupportContact
    from reljac.maps import MapSupport

    talos = reljac.Robot.load("talos")
    frames = ("universe", "arm_left_7_link")  # the hand in the world: where the held base is matters
    if legs == "locked":
        talos, frames = talos.locked(["root_joint", "leg_*"]), ("arm_left_7_link", "arm_right_7_link")
    soles = MapSupport([SupportContact.rectangle(f, 0.2, 0.1) for f in ("left_sole_link", "right_sole_link")], 0.02)
    args = dict(samples=2_000, voxel=0.1, seed=4, chunk=700, support=soles)
    threaded = capability_map(talos, *frames, workers=2, **args)
    on_processes = capability_map(talos, *frames, scheduler=process_client, **args)
    assert 0 < threaded.rejected < 2_000
    assert on_processes == threaded
