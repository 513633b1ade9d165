"""Turns with no human in them: scheduled jobs and Soul Stream wakes, their schedules and how they are told."""
