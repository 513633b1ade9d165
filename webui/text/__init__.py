"""Text from and to the outside: canonical JSON, untrusted JSON, lone surrogates, secret masking, reply Markdown."""
