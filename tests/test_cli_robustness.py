"""The command line's promise: documented number ranges, one-line errors, exit 0 on a closed
pipe, exit 130 on Ctrl-C, and files that are not regular URDFs named as such."""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from reljac.apps.cli import build_parser, main

pytestmark = pytest.mark.slow

ENV = dict(os.environ)  # subprocesses import the installed reljac (see conftest.py)


def run_main(*args):
    """main(args) in this process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    return code, out.getvalue(), err.getvalue()


def reljac_program(*args) -> list:
    """The installed `reljac` program next to this Python (what users run), with arguments."""
    program = Path(sys.executable).with_name("reljac")
    head = [str(program)] if program.exists() else [sys.executable, "-m", "reljac.apps.cli"]
    return head + list(args)


def chain_urdf(path: Path, n: int) -> Path:
    links = "".join(f'<link name="l{i}"/>' for i in range(n + 1))
    joints = "".join(
        f'<joint name="j{i}" type="revolute"><parent link="l{i - 1}"/><child link="l{i}"/>'
        f'<origin xyz="0 0 0.1"/><axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>'
        for i in range(1, n + 1))
    path.write_text(f'<robot name="chain{n}">{links}{joints}</robot>')
    return path


# ----------------------------------------------------------------------------- ranges
def _subcommands():
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices


def test_every_number_option_documents_its_range():
    numeric = 0
    for name, parser in _subcommands().items():
        for action in parser._actions:
            if action.type is None or action.type in (str,) or getattr(action.type, "__name__", "") == "_folder":
                continue
            numeric += 1
            assert action.help and re.search(r"\d\.\.\d|<= ?\d|\.\.2\^", action.help), (name, action.dest, action.help)
    assert numeric >= 8


@pytest.mark.parametrize("args, fragment", [
    (["check", "planar_2link", "--samples", str(10**9)], "1..10000"),
    (["analyze", "planar_2link", "universe", "tip", "--samples", str(10**9)], "1..1000000"),
    (["analyze", "planar_2link", "universe", "tip", "--samples", "1" + "0" * 5000], "--samples"),
    (["jacobian", "planar_2link", "universe", "tip", "--precision", str(10**8)], "0..16"),
    (["jacobian", "planar_2link", "universe", "tip", "--seed", str(2**64)], "--seed"),
    (["jacobian", "planar_2link", "universe", "tip", "--seed", "1.5"], "integer"),
    (["jacobian", "planar_2link", "universe", "tip", "--q", "1e101", "0"], "1e+100"),
    (["jacobian", "planar_2link", "universe", "tip", "--q", "nan", "0"], "expected a number, got 'nan'"),
    # numbers in decimal only: Python's float() read "1_0" as 10 and a full-width digit as a digit
    (["jacobian", "planar_2link", "universe", "tip", "--q", "1_0", "0"], "expected a number, got '1_0'"),
    (["jacobian", "planar_2link", "universe", "tip", "--joint", "joint1=\uff11"],
     "value of joint 'joint1' must be a number, not '\uff11'"),
    (["info", "dual_arm", "--lock", "left_joint1=infinity"], "value of joint 'left_joint1' must be a number"),
    (["info", "dual_arm", "--lock", "left_joint1=1e400"], "value of joint 'left_joint1' is '1e400'; it must be finite"),
    (["demo", "dual-arm", "--headless", "--dt", "1_0"], "argument --dt: expected a number of seconds, got '1_0'"),
    (["check", "planar_2link", "--samples", "1_0"], "--samples: expected an integer in 1..10000, got '1_0'"),
    (["map", "dual_arm", "torso", "left_tool", "--samples", "10", "--voxel", "0.0_5", "--out", "m.npz"],
     "voxel must be a positive number of metres, not '0.0_5'"),
    (["demo", "dual-arm", "--headless", "--duration", "nan"], "--duration: expected a number of seconds, got 'nan'"),
    (["map", "dual_arm", "torso", "left_tool", "--support", "left_tool", "--sole", "0.2x1_0"],
     "--sole: expected LENGTHxWIDTH in metres"),
    (["jacobian", "planar_2link", "universe", "tip", "--joint", "joint1=1e308"], "joint1"),
    (["jacobian", "planar_2link", "universe", "tip", "--joint", "joint1=true"], "joint1"),
    (["jacobian", "planar_2link"], "required"),
    (["nonsense"], "invalid choice"),
    (["info", "planar_2link", "--package-dir", "/no/such/folder"], "not a folder"),
    (["info", "dual_armm"], "did you mean 'dual_arm'"),
    # accepted before, and ignored or the last value taken (an adversarial pass)
    (["jacobian", "dual_arm", "left_tool", "right_tool", "--joint", "left_joint1=1", "--joint", "left_joint1=2"],
     "--joint: joint 'left_joint1' is given twice"),
    (["info", "nosuchrobot", "--list"], "--list lists the bundled robots: give it no ROBOT"),
    (["info", "--srdf", "x.srdf"], "--srdf describes how to load a robot: give a ROBOT with it"),
    (["info", "--list", "--floating-base", "--lock", "j=1"], "--floating-base, --lock describe how to load a robot"),
    (["demo", "dual-arm", "--headless", "--record", ""], "--record FILE must end in .npz or .json, not ''"),
    (["demo", "dual-arm", "--headless", "--plot", ""], "--plot FILE must end in"),
    (["demo", "dual-arm", "--loop", "--exit"], "--loop repeats until Ctrl-C and --exit exits"),
    (["demo", "dual-arm", "--headless", "--duration", "0.0001", "--dt", "0.1"],
     "--duration 0.0001 s is shorter than one control period"),
])
def test_bad_arguments_are_one_line_with_exit_2(args, fragment):
    start = time.perf_counter()
    code, out, err = run_main(*args)
    assert code == 2, (code, out, err)
    assert len(err.strip().splitlines()) == 1 and err.startswith("reljac") and "error:" in err, err
    assert fragment in err, err
    assert time.perf_counter() - start < 30


def test_no_mimic_reaches_info_and_check(capsys):
    code, out, _ = run_main("info", "hand", "--no-mimic")
    assert code == 0 and "nq = 16, nv = 16" in out and "mimic:" not in out
    code, out, _ = run_main("info", "hand")
    assert code == 0 and "nq = 12, nv = 12" in out
    code, out, err = run_main("check", "hand", "--no-mimic", "--samples", "3")
    assert code == 0 and "OK: the layers agree" in out, out + err
    from reljac.apps.check import check_urdf

    report = check_urdf("hand", mimic=False, samples=3)
    assert report.ok


# ----------------------------------------------------------------------------- closed pipes
@pytest.mark.parametrize("args", [
    ["info", "{chain}"],
    ["info", "--help"],
    ["jacobian", "dual_arm", "left_tool", "right_tool"],
    ["check", "planar_2link", "--samples", "2"],
    ["analyze", "planar_2link", "universe", "tip", "--samples", "20"],
    ["demo", "hand", "--headless", "--duration", "0.3"],
], ids=["info-big", "help", "jacobian", "check", "analyze", "demo"])
def test_a_closed_output_pipe_ends_quietly_with_exit_0(tmp_path, args):
    chain = chain_urdf(tmp_path / "chain.urdf", 400)
    argv = reljac_program(*[a.replace("{chain}", str(chain)) for a in args])
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV)
    proc.stdout.close()  # like `| head -0`: every write fails with EPIPE
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 0, err
    assert err == "", err


def test_a_pipe_closed_after_the_first_line_ends_quietly(tmp_path):
    chain = chain_urdf(tmp_path / "chain.urdf", 600)
    proc = subprocess.Popen(reljac_program("info", str(chain)), stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV)
    first = proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert first.startswith(b"robot 'chain600'")
    assert proc.wait(timeout=120) == 0 and err == "", err


# ----------------------------------------------------------------------------- Ctrl-C
# An interrupted `reljac` says so in one line and ends with exit code 130. From the first line of
# reljac's own code (reljac/__init__.py, reljac.program) until a command runs, Ctrl-C exits 130 at
# once; then main() handles KeyboardInterrupt, and clears CPython 3.11's memory of one raised inside
# eval() of a string (namedtuple's and dataclasses' methods, while a command loads its modules),
# which made a `python -m reljac.apps.cli` run end killed by SIGINT (-2) instead. Before reljac's
# code runs, the interpreter's own start-up (its site module: here cmeel's .pth file, 0.05-0.3 s
# under load) answers Ctrl-C as it does for any Python program; the interrupts below are timed
# from the moment the reljac package is loaded (PYTHONPROFILEIMPORTTIME's line for it on stderr),
# so that a busy machine does not move them into that start-up.
INTERRUPTED = (130,)
_LOADED = re.compile(r"^import time:.*\|\s+reljac$")  # the reljac package's import finished


def _interrupt_after(argv, delay: float):
    """Run argv, and Ctrl-C it `delay` s after the reljac package is loaded; (exit code, stdout,
    stderr without the import-time lines)."""
    env = dict(ENV, PYTHONPROFILEIMPORTTIME="1")
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    early = []
    for line in proc.stderr:  # until the reljac package is loaded (its __init__ ran)
        early.append(line)
        if _LOADED.match(line.rstrip()):
            break
    time.sleep(delay)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    err = "".join(line for line in early + err.splitlines(keepends=True) if not line.startswith("import time:"))
    return proc.returncode, out, err


def test_ctrl_c_from_the_first_line_of_reljac_is_one_line_and_exit_130():
    """Right after the reljac package is loaded (the command line's own modules then load, the
    import of `typing` and others where a traceback once came from) and a little later."""
    for delay in (0.0, 0.0, 0.02, 0.05, 0.1):
        code, out, err = _interrupt_after(reljac_program("demo", "hand", "--headless"), delay)
        assert code == 130 and err == "reljac: interrupted\n", (delay, code, err[-2000:])
        assert "Traceback" not in out


def test_an_interrupt_inside_eval_of_a_string_still_ends_with_130(tmp_path):
    """CPython 3.11 marks a KeyboardInterrupt raised inside eval() of a string as unhandled even
    once handled, and a `python -m` run then killed itself with SIGINT at exit: exit -2 after
    'reljac: interrupted' (about one interrupt in eight while a demo loaded its modules)."""
    (tmp_path / "busy_command.py").write_text(textwrap.dedent("""\
        import os, signal, sys, threading
        import reljac.apps.commands as commands
        def busy(args):  # as namedtuple's eval of a string, interrupted
            threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT)).start()
            return eval("[x for x in iter(int, 1) if x]")  # busy until interrupted; the list stays empty
        commands.cmd_robots = busy
        from reljac.apps.cli import main
        sys.exit(main(["robots"]))
        """))
    env = dict(ENV, PYTHONPATH=os.pathsep.join([str(tmp_path), ENV.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, "-m", "busy_command"], capture_output=True, text=True, env=env,
                          timeout=120)
    assert proc.returncode == 130 and proc.stderr == "reljac: interrupted\n", (proc.returncode, proc.stderr)


def test_an_interrupt_an_import_turned_into_another_error_still_ends_with_130(tmp_path):
    """numpy's C code turns a KeyboardInterrupt raised while it imports `datetime` into
    "ImportError: PyCapsule_Import could not import module 'datetime'", chaining nothing (CI saw
    it once, Ctrl-C 0.02 s after reljac loaded): the program noted the Ctrl-C, and says so."""
    script = tmp_path / "reljac"  # a script named reljac is the reljac program (reljac.program)
    script.write_text(textwrap.dedent("""\
        import os, signal, sys, time
        import reljac.apps.commands as commands
        def import_swallowing_the_interrupt(args):
            try:
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(30)
            except KeyboardInterrupt:
                pass
            raise ImportError("PyCapsule_Import could not import module 'datetime'")
        commands.cmd_robots = import_swallowing_the_interrupt
        from reljac.apps.cli import main
        sys.exit(main(["robots"]))
        """))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=ENV, timeout=120)
    assert proc.returncode == 130 and proc.stderr == "reljac: interrupted\n", (proc.returncode, proc.stderr)


@pytest.mark.parametrize("delay", [0.4, 1.5, 3.0])
def test_ctrl_c_while_computing_is_one_line_and_exit_130(tmp_path, delay):
    chain = chain_urdf(tmp_path / "chain.urdf", 150)  # check takes ~20 s: always interrupted
    code, _out, err = _interrupt_after(reljac_program("check", str(chain), "--samples", "30"), delay)
    assert code in INTERRUPTED, (code, err)
    assert err.strip() == "reljac: interrupted", err


SWALLOWING_COMMAND = """\
import os, signal, sys, threading, time
import reljac.apps.commands as commands
from reljac import program
from reljac.apps.report import hook
from reljac.apps.view import wait_for_interrupt

def swallow_ctrl_c():  # as Boost.Python's overload resolution: any error a conversion raised is cleared
    try:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(30)
    except BaseException:
        pass

def command(args):
    what = sys.argv[1]
    if what != "hold":
        swallow_ctrl_c()
        print("went on", flush=True)
    if what == "loop":  # a long command reporting its progress: 100 s without an end
        progress = hook(None)
        for _ in range(10_000):
            time.sleep(0.01)
            if progress is not None:  # None: no bar
                progress(1)
    elif what in ("hold", "hold after"):  # a viewer served until Ctrl-C
        if what == "hold":
            threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT)).start()
        with program.ctrl_c_ends_the_wait():
            wait_for_interrupt("Ctrl-C to stop")
    print("finished", flush=True)
    return 0

commands.cmd_robots = command
signal.signal(signal.SIGINT, program.interrupted_while_starting)  # as the reljac program starts
from reljac.apps.cli import main
sys.exit(main(["robots"]))
"""


@pytest.mark.parametrize("what", ["return", "loop", "hold after"])
def test_a_ctrl_c_an_extension_swallowed_still_ends_the_program_with_130(tmp_path, what):
    """A Ctrl-C whose KeyboardInterrupt something cleared (the flaky case: `reljac check`
    interrupted at 0.4 s ran to its end and exited 0): the command ends with 130 and one line,
    at its next progress report if it makes any, at once if it then waits for Ctrl-C."""
    script = tmp_path / "swallowing.py"
    script.write_text(SWALLOWING_COMMAND)
    began = time.perf_counter()
    proc = subprocess.run([sys.executable, str(script), what], capture_output=True, text=True, env=ENV, timeout=120)
    seconds = time.perf_counter() - began
    assert (proc.returncode, proc.stderr) == (130, "reljac: interrupted\n"), (proc.returncode, proc.stderr)
    assert "went on" in proc.stdout
    assert ("finished" in proc.stdout) == (what == "return"), proc.stdout
    assert seconds < 60, seconds  # neither the 100 s loop nor the endless wait ran to their ends


def test_ctrl_c_that_ends_a_wait_ends_the_command_normally(tmp_path):
    """A viewer served until Ctrl-C (view, debug, place): that Ctrl-C is the command's normal end."""
    script = tmp_path / "swallowing.py"
    script.write_text(SWALLOWING_COMMAND)
    proc = subprocess.run([sys.executable, str(script), "hold"], capture_output=True, text=True, env=ENV, timeout=120)
    assert (proc.returncode, proc.stderr) == (0, ""), (proc.returncode, proc.stderr)
    assert proc.stdout.splitlines() == ["Ctrl-C to stop", "finished"], proc.stdout


@pytest.mark.parametrize("delay", [0.3, 1.0, 2.5])
def test_ctrl_c_during_a_demo_never_prints_a_traceback(delay):
    """Exit 130 and one line on stderr; once the motion has started, its summary table (marked
    "(interrupted)") is printed first."""
    code, out, err = _interrupt_after(reljac_program("demo", "hand"), delay)
    assert "Traceback" not in err and "Traceback" not in out, err
    assert code in INTERRUPTED and err.strip() == "reljac: interrupted", (code, err)
    assert "simulated in" not in out or "(interrupted)" in out, out[-500:]  # a summary says it was cut


def test_a_ctrl_c_while_the_compiled_core_initialises_is_an_interrupt_not_a_missing_core(monkeypatch):
    """pybind11 turns an exception raised while an extension initialises into an ImportError (the
    exception its cause): a Ctrl-C there read as "the compiled IK core is not built" and the command
    ran on, on the Python solver (seen once in 50 interrupts of `reljac demo hand` 0.2-0.5 s in)."""
    from reljac import compiled_core

    def interrupted_import(name):
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as interrupt:
            raise ImportError("initialization failed") from interrupt

    monkeypatch.setattr(compiled_core, "_loaded", [])
    monkeypatch.setattr(compiled_core.importlib, "import_module", interrupted_import)
    with pytest.raises(KeyboardInterrupt):
        compiled_core.extension()
    assert compiled_core._loaded == []  # nothing decided: the next call imports it again

    def missing(name):
        raise ImportError(f"No module named {name!r}")

    monkeypatch.setattr(compiled_core.importlib, "import_module", missing)
    assert compiled_core.extension() is None and compiled_core.mismatch() == ""


# ----------------------------------------------------------------------------- files on the command line
def test_files_that_are_not_urdfs_are_named_on_the_command_line(tmp_path):
    fifo = tmp_path / "robot.urdf"
    os.mkfifo(fifo)
    loop = tmp_path / "loop.urdf"
    loop.symlink_to(loop)
    for path, fragment in ((fifo, "FIFO"), (loop, "symbolic link loop"), (tmp_path, "is a directory")):
        code, _, err = run_main("info", path)
        assert code == 2 and fragment in err and len(err.splitlines()) == 1, err


def test_a_non_utf8_path_works_and_prints(tmp_path):
    raw = os.path.join(os.fsencode(tmp_path), b"robot\xff.urdf")
    with open(raw, "w") as file:
        file.write('<robot name="r"><link name="a"/><link name="b"/><joint name="j" type="revolute">'
                   '<parent link="a"/><child link="b"/><limit lower="-1" upper="1" effort="1" velocity="1"/>'
                   '</joint></robot>')
    proc = subprocess.run(reljac_program("info", raw), capture_output=True, env=ENV, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert b"robot\\xff.urdf" in proc.stdout and proc.stderr == b""
    missing = os.path.join(os.fsencode(tmp_path), b"gone\xfe.urdf")
    proc = subprocess.run(reljac_program("info", missing), capture_output=True, env=ENV, timeout=120)
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1
    assert b"gone\\xfe.urdf" in proc.stderr and b"does not exist" in proc.stderr


def test_python_dash_m_reljac_is_the_reljac_program():
    """`python -m reljac ARGS` answers as `reljac ARGS` does (a mistake: one line, exit 2)."""
    import subprocess
    import sys

    run = subprocess.run([sys.executable, "-m", "reljac", "robots", "--nope"], capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 2 and run.stderr.startswith("reljac: error:") and run.stderr.count("\n") == 1, run.stderr
    run = subprocess.run([sys.executable, "-m", "reljac", "robots"], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and "dual_arm" in run.stdout, run.stderr


def test_python_dash_m_reljac_runs_a_map_on_a_local_cluster(tmp_path):
    """A LocalCluster's spawned workers import the `__main__` module again: `python -m reljac`'s
    must not run the program there (it was refused: "put the code ... under if __name__ ==
    '__main__'"), and `reljac bench place`, which maps on one, failed that way."""
    out = tmp_path / "m.npz"
    run = subprocess.run([sys.executable, "-m", "reljac", "map", "dual_arm", "left_tool", "right_tool", "--samples",
                          "200", "--voxel", "0.2", "--scheduler", "local", "--workers", "1", "--no-progress", "--out",
                          str(out)], capture_output=True, text=True, env=ENV, timeout=180)
    assert run.returncode == 0 and out.is_file(), run.stderr[-2000:]


@pytest.mark.parametrize("command", sorted(_subcommands()))
def test_every_command_s_usage_errors_are_one_reljac_error_line(command):
    """An unknown option and a value of the wrong type, for every command: exit 2, and stderr is one
    line that starts 'reljac: error:' (the subcommand's own parser printed 'reljac check: error:')
    and points at the command's help."""
    for args in ([command, "--no-such-option"], [command, "--seed", "x", "--no-such-option"]):
        code, out, err = run_main(*args)
        assert code == 2 and out == "", (args, code, out)
        assert err.startswith("reljac: error:") and err.count("\n") == 1, (args, err)
        assert f"'reljac {command} --help'" in err or "'reljac --help'" in err, (args, err)
