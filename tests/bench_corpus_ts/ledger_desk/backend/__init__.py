"""Ledger Desk tool backend."""
