"""Random configurations for capability maps, reproducible sample by sample.

Sample i of a map with seed s is a pure function of (s, i): samples come in blocks of
``BLOCK`` = 65,536; block k draws its uniform numbers from ``SeedSequence(s, spawn_key=(k,))`` (the
k-th child of ``SeedSequence(s).spawn``) through PCG64, ``n_uniforms`` per sample in sample order, so
any range of samples can be drawn alone by advancing the generator (``PCG64.advance``). Chunk
sizes and the number of workers therefore never change which configurations a map sees.

Each joint draws uniformly inside its position limits, like :meth:`reljac.Robot.random_configuration`
(same ranges, a different stream): bounded 1-DoF joints in [lower, upper] (within +-1e100); unbounded revolute
angles and continuous joints in [-pi, pi]; unbounded translations (prismatic, free-flyer, planar)
in [-1, 1] m; quaternions uniform on SO(3) (Shoemake's method, three uniforms). Mimic joints take
no entry of q.
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numpy.typing import ArrayLike

from ..compiled_core import extension
from ..exceptions import UnsupportedJoint
from ..joint_space import is_angle_pair
from ..robot import Robot
from .grid import sampled_range

BLOCK = 2**16
LINEAR, ANGLE, QUATERNION = range(3)


class Sampler:
    """Draws configurations (N, nq) for samples [start, stop) of seed `seed`.

    `held` (q indices, values): entries of q set to fixed values after drawing (a balance-aware
    map's free-flyer, :mod:`reljac.maps.balance`); every other entry is as without it.

    Raises:
        UnsupportedJoint: a joint type this sampler does not draw (names the joint).
    """

    def __init__(self, robot: Robot, seed: int, *, compiled: bool = True,
                 held: tuple[np.ndarray, np.ndarray] | None = None) -> None:
        self.nq = robot.nq
        self._held = held if held is not None and len(held[0]) else None
        self.seed = int(seed)
        self._plan: list[tuple[int, int, int, float, float]] = []  # (kind, q index, u index, lo, hi)
        model = robot.model
        lo, hi = model.lowerPositionLimit, model.upperPositionLimit
        u = 0

        def linear(i: int, default: float, *, clip: bool = False) -> None:
            nonlocal u
            a, b = sampled_range(lo[i], hi[i], default)
            if clip:
                a, b = max(a, -default), min(b, default)
            self._plan.append((LINEAR, i, u, a, b))
            u += 1

        def angle(i: int) -> None:  # (cos, sin) at q[i], q[i + 1]
            nonlocal u
            self._plan.append((ANGLE, i, u, 0.0, 0.0))
            u += 1

        def quaternion(i: int) -> None:  # (x, y, z, w) at q[i:i + 4]
            nonlocal u
            self._plan.append((QUATERNION, i, u, 0.0, 0.0))
            u += 3

        for j in sorted((j for j in range(1, model.njoints) if model.joints[j].nq > 0),
                        key=lambda j: model.joints[j].idx_q):
            joint = model.joints[j]
            i, kind = joint.idx_q, joint.shortname()
            if joint.nq == 1:
                linear(i, math.pi if kind.startswith("JointModelR") else 1.0)
            elif is_angle_pair(joint):
                angle(i)
            elif kind == "JointModelFreeFlyer":
                for k in range(3):
                    linear(i + k, 1.0, clip=True)
                quaternion(i + 3)
            elif kind == "JointModelSpherical":
                quaternion(i)
            elif kind == "JointModelPlanar":
                self._plan.append((LINEAR, i, u, -1.0, 1.0))
                self._plan.append((LINEAR, i + 1, u + 1, -1.0, 1.0))
                u += 2
                angle(i + 2)
            else:
                raise UnsupportedJoint(f"joint '{model.names[j]}' has type {kind}, which reljac.maps does not sample")
        self.n_uniforms = u
        self._neutral = robot.neutral()
        plan = np.array([(k, i, v, a, b) for k, i, v, a, b in self._plan], dtype=float).reshape(-1, 5)
        self._kinds, self._q_idx, self._u_idx = (plan[:, c].astype(np.int64) for c in range(3))
        self._lo, self._hi = plan[:, 3].copy(), plan[:, 4].copy()
        is_linear = self._kinds == LINEAR
        self._linear = (self._q_idx[is_linear], self._u_idx[is_linear], self._lo[is_linear],
                        self._hi[is_linear] - self._lo[is_linear])
        self._core = extension() if compiled else None

    def uniforms(self, start: int, stop: int) -> np.ndarray:
        """The uniform numbers of samples [start, stop), shape (stop - start, n_uniforms)."""
        out = np.empty((stop - start, self.n_uniforms))
        i = start
        while i < stop:
            block, offset = divmod(i, BLOCK)
            end = min(stop, (block + 1) * BLOCK)
            generator = np.random.PCG64(np.random.SeedSequence(self.seed, spawn_key=(block,)))
            generator.advance(offset * self.n_uniforms)
            np.random.Generator(generator).random(out=out[i - start:end - start])
            i = end
        return out

    def draw(self, start: int, stop: int) -> np.ndarray:
        """Configurations of samples [start, stop), shape (stop - start, nq), C-contiguous.

        Mapped from the uniforms by the compiled core when it is built (without the GIL), else by
        :meth:`from_uniforms`, its specification (equal to it up to the last bit of sin and cos).
        """
        U = self.uniforms(start, stop)
        if self._core is None:
            Q = self.from_uniforms(U)
        else:
            Q = self._core.configurations_from_uniforms(self._kinds, self._q_idx, self._u_idx, self._lo, self._hi,
                                                        self._neutral, U)
        if self._held is not None:
            Q[:, self._held[0]] = self._held[1]
        return Q

    def from_uniforms(self, U: np.ndarray) -> np.ndarray:
        """Configurations (n, nq) from the uniforms (n, n_uniforms) of n samples, in numpy."""
        Q = np.empty((U.shape[0], self.nq))
        Q[:] = self._neutral
        q_idx, u_idx, lo, span = self._linear
        Q[:, q_idx] = lo + span * U[:, u_idx]
        for kind, i, u, _, _ in self._plan:
            if kind == LINEAR:
                continue
            elif kind == ANGLE:
                theta = (2.0 * U[:, u] - 1.0) * math.pi
                Q[:, i] = np.cos(theta)
                Q[:, i + 1] = np.sin(theta)
            else:
                r1, r2 = np.sqrt(1.0 - U[:, u]), np.sqrt(U[:, u])
                t1, t2 = 2.0 * math.pi * U[:, u + 1], 2.0 * math.pi * U[:, u + 2]
                Q[:, i] = r1 * np.sin(t1)
                Q[:, i + 1] = r1 * np.cos(t1)
                Q[:, i + 2] = r2 * np.sin(t2)
                Q[:, i + 3] = r2 * np.cos(t2)
        return Q

    def configurations_at(self, indices: ArrayLike, *, workers: int = 1) -> np.ndarray:
        """Configurations of the samples with the given global indices, shape (n, nq); blocks
        are drawn on `workers` threads."""
        indices = np.asarray(indices, dtype=np.int64)
        Q = np.empty((indices.size, self.nq))
        order = np.argsort(indices, kind="stable")
        blocks = indices[order] // BLOCK
        starts = np.flatnonzero(np.r_[True, blocks[1:] != blocks[:-1]]) if indices.size else np.zeros(0, int)
        groups = np.split(order, starts[1:])

        def fill(where: np.ndarray) -> None:
            if where.size > 64:  # many from one block: draw the span once
                lo, hi = int(indices[where].min()), int(indices[where].max()) + 1
                Q[where] = self.draw(lo, hi)[indices[where] - lo]
            else:
                for w in where:
                    Q[w] = self.draw(int(indices[w]), int(indices[w]) + 1)[0]

        if workers > 1 and len(groups) > 1:
            with ThreadPoolExecutor(max_workers=workers) as pool:
                list(pool.map(fill, groups))
        else:
            for where in groups:
                fill(where)
        return Q
