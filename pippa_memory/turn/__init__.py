"""What memory does within a turn: the one tool and its verbs, background answers, notes, state."""
