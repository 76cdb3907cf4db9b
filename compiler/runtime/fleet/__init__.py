"""Running a fleet (SPEC §13): watching a manifest, reloading it, and the watch's status."""
