"""What the suite's factory fixtures (``tests/conftest.py``) build a household with: the password
every test account has, and the demo soul's vault."""

DEMO_VAULT = "demo/vaults/pippa"
PASSWORD = "a-long-test-password-42"
