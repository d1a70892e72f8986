"""Vigil: self-hostable AI security-operations service."""

__version__ = "0.1.0"
