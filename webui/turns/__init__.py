"""The turn: the one service every page and API call goes through, its lock, rounds, history and events."""
