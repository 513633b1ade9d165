"""Vessel adapters: one module per provider behind the contract in :mod:`webui.vessels.base`."""
