"""Aria: the customer-support agent behind help.example.com chat."""

__version__ = "1.8.2"
