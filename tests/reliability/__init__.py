"""Reliability and security suite: hostile inputs, faults during --fix, fuzzing."""
