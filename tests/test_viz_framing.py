"""A robot framed by the Viewer's default camera spans at least half of an 800 x 600 picture in its
larger extent, unclipped (issue 28): the bundled dual_arm in its T-pose (q = 0); TIAGo dual at a
random pose is framed in tests/test_viz_robots.py (the locked TIAGo's full twin) and Talos standing
in tests/test_viz_readable.py (beside its labels), by the same rules.

Measured in headless Chromium: the robot's pixels are those that change when its node is hidden.
The pictures are kept in the test's tmp folder.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_viz import needs_chromium
from test_viz_robots import framing_problems, picture

from reljac import Robot, robots

pytestmark = pytest.mark.slow

HALF = 0.5  # the robot's larger extent, as a fraction of the picture's same extent, at least


def png(path, image: np.ndarray) -> None:
    """Write an (H, W, 3) uint8 picture as PNG (for a person to look at)."""
    import struct
    import zlib

    h, w, _ = image.shape
    raw = b"".join(b"\x00" + image[y].astype(np.uint8).tobytes() for y in range(h))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
                     + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def load(name: str) -> Robot:
    if name != "dual_arm" and robots.example_robot_data_dir() is None:
        pytest.skip("example-robot-data is not installed")
    return Robot.bundled(name) if name == "dual_arm" else Robot.load(name)


@needs_chromium
def test_the_default_camera_frames_the_robot_across_half_the_picture_unclipped(chromium, tmp_path):
    robot = load("dual_arm")
    drawn, empty = picture(chromium, robot, robot.neutral())
    png(tmp_path / "dual_arm.png", drawn)
    problems = framing_problems(drawn, empty, HALF)
    assert not problems, f"dual_arm: {problems} (picture in {tmp_path})"
