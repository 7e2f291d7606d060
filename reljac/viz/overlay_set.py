"""The overlays of a robot's scene, by name, and their frame labels laid out together.

A :class:`~reljac.viz.Viewer` holds one :class:`OverlaySet` under its robot's node ``<root>``: each
overlay under ``<root>/overlays/<name>``, its label (if any) under ``<root>/labels/<name>``.
Every pose is in the world frame w [m]; ``oMf`` is Pinocchio's list of frame placements T_wf.
The set sends meshcat commands but says nothing of a dead server: its caller does (the viewer's
session turns socket errors into one-line errors).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np

from ..exceptions import ConfigurationError, suggest
from ..validation import as_bool
from .camera import CameraPose, box_corners
from .overlays import LabelLayer, Overlay

LABEL_GAP = 0.25  # the clearance between a label and its frame's origin, in label heights


class OverlaySet(Mapping[str, Overlay]):
    """The overlays drawn under ``scene[root]`` (the robot's node in a ``meshcat.Visualizer``), by
    name in creation order: a read-only mapping name -> :class:`~reljac.viz.overlays.Overlay`.

    Attributes:
        labels_visible: whether the frame labels are shown (:meth:`show_labels`).
    """

    def __init__(self, scene: Any, root: str) -> None:
        self.scene, self.root = scene, root
        self._overlays: dict[str, Overlay] = {}
        self._layer = LabelLayer(gap=0.0)  # its clearance set by each on_camera, before any layout
        self.labels_visible = True

    def __getitem__(self, name: str) -> Overlay:
        return self._overlays[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._overlays)

    def __len__(self) -> int:
        return len(self._overlays)

    @property
    def node(self) -> Any:
        """The robot's node, made anew at each use: it talks through the scene's window of the
        moment (the debug page swaps it for a relay)."""
        return self.scene[self.root]

    def label_node(self, name: str) -> Any:
        """The meshcat node the label of overlay `name` is drawn at."""
        return self.node["labels"][name]

    def add(self, name: str, make: Callable[[Any], Overlay], oMf: Any) -> Overlay:
        """Build overlay `name` with `make(node)` on its node and place it at the frames' placements
        `oMf` (an overlay of that name is removed first); returns it.

        Raises:
            ConfigurationError: a name that is empty, not a string, or holds '/'; a `make` that is
                not callable or does not return an Overlay.
        """
        if not isinstance(name, str) or not name or "/" in name:
            raise ConfigurationError(f"an overlay name must be a non-empty string without '/', not {name!r}")
        if not callable(make):
            raise ConfigurationError(f"overlay '{name}': make must be a callable make(node) -> Overlay, got "
                                     f"{type(make).__name__}")
        if name in self._overlays:
            self.remove(name)
        overlay = make(self.node["overlays"][name])
        if not isinstance(overlay, Overlay):
            raise ConfigurationError(f"overlay '{name}': make(node) must return an Overlay "
                                     f"(reljac.viz.overlays.Overlay), got {type(overlay).__name__}")
        overlay.place(oMf)
        self._overlays[name] = overlay
        return overlay

    def remove(self, name: str) -> None:
        """Delete overlay `name` from the scene.

        Raises:
            ConfigurationError: no overlay has this name.
        """
        if name not in self._overlays:
            shown = ", ".join(self._overlays) or "none"
            raise ConfigurationError(f"no overlay named {name!r}{suggest(str(name), self._overlays)} "
                                     f"(overlays: {shown})")
        self._overlays.pop(name).delete()

    def clear(self) -> None:
        """Delete every overlay and label (hidden labels stay hidden for the next ones)."""
        self.node["overlays"].delete()
        self.node["labels"].delete()
        if not self.labels_visible:
            self.node["labels"].set_property("visible", False)
        self._overlays.clear()

    def show_labels(self, visible: bool) -> None:
        """Show or hide every frame label."""
        self.labels_visible = as_bool(visible, "visible (show the labels)", error=ConfigurationError)
        self.node["labels"].set_property("visible", self.labels_visible)

    def update(self, oMf: Any) -> None:
        """Move every overlay to the frames' placements `oMf` (after a display)."""
        for overlay in self._overlays.values():
            overlay.update(oMf)

    def on_camera(self, camera: CameraPose, label_height: float) -> None:
        """The camera was framed at `camera`: tell each overlay, and draw the labels `label_height`
        [m] tall (the label layer's clearance follows)."""
        self._layer.gap = LABEL_GAP * label_height
        for overlay in self._overlays.values():
            overlay.on_camera(camera)
            if overlay.label is not None and not np.isclose(overlay.label.height, label_height, rtol=1e-9, atol=0.0):
                overlay.label.resize(label_height)

    @property
    def has_labels(self) -> bool:
        """Whether an overlay has a label."""
        return any(o.label is not None for o in self._overlays.values())

    def lay_out_labels(self, oMf: Any, camera: CameraPose) -> None:
        """Place every label beside its frame's origin, apart from the others as seen from `camera`
        (:class:`~reljac.viz.overlays.LabelLayer`)."""
        self._layer.update([o.label for o in self._overlays.values() if o.label is not None], oMf, camera)

    def box_corners(self) -> list[np.ndarray]:
        """(8, 3) in w [m] per overlay that has a box (a capability map's voxels): what the camera
        frames with the robot."""
        return [box_corners(*box) for box in (o.world_box() for o in self._overlays.values()) if box is not None]
