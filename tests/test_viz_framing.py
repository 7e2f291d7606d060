"""A robot framed by the Viewer's default camera spans at least half of an 800 x 600 picture in its
larger extent, unclipped (issue 28): TIAGo dual with its arms stretched sideways (q = 0), the
bundled dual_arm in its T-pose (q = 0); Talos standing is framed in tests/test_viz_readable.py
(the same rules, beside its labels).

Measured in headless Chromium: the robot's pixels are those that change when its node is hidden.
The pictures are kept in the test's tmp folder.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_viz import needs_chromium
from test_viz_robots import picture

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
@pytest.mark.parametrize("name, posture", [("tiago_dual", "zero"), ("dual_arm", "zero")])
def test_the_default_camera_frames_the_robot_across_half_the_picture_unclipped(chromium, name, posture, tmp_path):
    robot = load(name)
    q = robot.neutral() if posture == "zero" else robot.reference_configuration()
    drawn, empty = picture(chromium, robot, q)
    png(tmp_path / f"{name}.png", drawn)
    rows, cols = np.nonzero(np.abs(drawn.astype(int) - empty.astype(int)).sum(axis=2) > 30)
    assert rows.size > 0, f"{name} is not drawn (picture in {tmp_path})"
    h, w = drawn.shape[:2]
    top, bottom, left, right = rows.min(), rows.max(), cols.min(), cols.max()
    spans = ((right - left + 1) / w, (bottom - top + 1) / h)
    assert max(spans) >= HALF, f"{name} spans {spans} of the picture (picture in {tmp_path})"
    assert top > 0 and left > 0 and bottom < h - 1 and right < w - 1, \
        f"{name} clipped: rows {top}-{bottom}, columns {left}-{right} (picture in {tmp_path})"
    centre = ((left + right) / 2 / w, (top + bottom) / 2 / h)
    assert np.all(np.abs(np.array(centre) - 0.5) < 0.1), f"{name} off centre: {centre} (picture in {tmp_path})"
