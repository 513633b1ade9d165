"""The bearer token the tests' reference engines are started with, and memory is set to send."""

TOKEN = "engine-test-token"
