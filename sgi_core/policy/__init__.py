"""Flagging policies: making one, its file, the rules it is written under, the gates that hold a
file to it or a new run to its baseline, calibration sessions, and the per-class references a
policy keeps for the shift checks of monitoring."""
