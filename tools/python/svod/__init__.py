# SPDX-License-Identifier: MIT OR GPL-2.0
"""svod: the reference storage allocator's API, backed by ``/dev/svod``.

A program written against the reference ``StorageAllocator`` class runs
unchanged with ``from svod import StorageAllocator, StorageHandle,
StaleHandleError, StorageExhaustedError``: the driver does the allocation,
keeps the handle table and checks generations. Standard library only
(``fcntl``, ``ctypes``, ``os``). See ``Documentation/python.rst``.
"""
from .allocator import StorageAllocator, StorageHandle
from .device import DEFAULT_PATH, Tier, tiers
from .errors import (DeviceGoneError, QuotaError, StaleHandleError,
                     StorageExhaustedError, TransferInterrupted)
from .planner import (PlanError, PlanExhaustedError, PlanResult, TLSFAllocator,
                      plan)
from .sharing import DmaBuf
from .sizes import SizeError, parse_size
from .transfer import Transfer

__version__ = "0.2.0"

__all__ = [
    "StorageAllocator", "StorageHandle", "StaleHandleError",
    "StorageExhaustedError", "QuotaError", "DeviceGoneError",
    "TransferInterrupted", "Tier", "tiers", "plan", "PlanResult",
    "PlanError", "PlanExhaustedError", "TLSFAllocator", "DEFAULT_PATH", "Transfer",
    "parse_size", "SizeError", "DmaBuf",
]
