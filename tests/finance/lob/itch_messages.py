"""TotalView-ITCH 5.0 messages built field by field from the published layouts, for tests.

Every message: type (1 byte), stock locate (2), tracking number (2), timestamp (6, ns since
midnight), then its own fields; integers big-endian, stocks 8 characters padded with spaces,
prices in 1e-4 dollars. ``frame`` puts each after its 2-byte big-endian length, as NASDAQ's
files do. Written apart from the reader (no import from it), so a wrong layout there fails.
"""

from __future__ import annotations

import struct


def _head(kind: str, locate: int, clock: int) -> bytes:
    return kind.encode() + struct.pack(">HH", locate, 0) + clock.to_bytes(6, "big")


def _stock(stock: str) -> bytes:
    return stock.encode().ljust(8)


def system_event(clock: int, code: str = "O") -> bytes:
    return _head("S", 0, clock) + code.encode()


def directory(locate: int, stock: str, clock: int = 0) -> bytes:
    """'R': stock, market category, financial status, round lot size, round lots only, issue
    classification, issue sub-type, authenticity, short sale threshold, IPO flag, LULD tier,
    ETP flag, ETP leverage factor, inverse indicator."""
    return (
        _head("R", locate, clock)
        + _stock(stock)
        + b"QN"
        + struct.pack(">I", 100)
        + b"NC"
        + b"Z "
        + b"PNN1N"
        + struct.pack(">I", 0)
        + b"N"
    )


def trading_action(locate: int, stock: str, state: str, clock: int) -> bytes:
    """'H': stock, trading state, reserved, reason (4)."""
    return _head("H", locate, clock) + _stock(stock) + state.encode() + b" " + b"    "


def add(
    locate: int,
    clock: int,
    ref: int,
    side: str,
    shares: int,
    stock: str,
    price: int,
    mpid: str | None = None,
) -> bytes:
    """'A' (or 'F' with an MPID): order reference, buy/sell, shares, stock, price."""
    body = struct.pack(">Q", ref) + side.encode() + struct.pack(">I", shares)
    body += _stock(stock) + struct.pack(">I", price)
    if mpid is None:
        return _head("A", locate, clock) + body
    return _head("F", locate, clock) + body + mpid.encode().ljust(4)


def executed(locate: int, clock: int, ref: int, shares: int, match: int) -> bytes:
    return _head("E", locate, clock) + struct.pack(">QIQ", ref, shares, match)


def executed_with_price(
    locate: int, clock: int, ref: int, shares: int, match: int, price: int
) -> bytes:
    """'C': order reference, executed shares, match number, printable, execution price."""
    return (
        _head("C", locate, clock)
        + struct.pack(">QIQ", ref, shares, match)
        + b"Y"
        + (struct.pack(">I", price))
    )


def cancel(locate: int, clock: int, ref: int, shares: int) -> bytes:
    return _head("X", locate, clock) + struct.pack(">QI", ref, shares)


def delete(locate: int, clock: int, ref: int) -> bytes:
    return _head("D", locate, clock) + struct.pack(">Q", ref)


def replace(locate: int, clock: int, ref: int, new_ref: int, shares: int, price: int) -> bytes:
    return _head("U", locate, clock) + struct.pack(">QQII", ref, new_ref, shares, price)


def trade(
    locate: int,
    clock: int,
    side: str,
    shares: int,
    stock: str,
    price: int,
    match: int,
    ref: int = 0,
) -> bytes:
    """'P': order reference (0 as NASDAQ fills it in), buy/sell, shares, stock, price, match
    number."""
    return (
        _head("P", locate, clock)
        + struct.pack(">Q", ref)
        + side.encode()
        + struct.pack(">I", shares)
        + _stock(stock)
        + struct.pack(">IQ", price, match)
    )


def cross(locate: int, clock: int, shares: int, stock: str, price: int, match: int) -> bytes:
    """'Q': shares (8), stock, cross price, match number, cross type."""
    return (
        _head("Q", locate, clock)
        + struct.pack(">Q", shares)
        + _stock(stock)
        + struct.pack(">IQ", price, match)
        + b"O"
    )


def other(kind: str, locate: int, clock: int, stock: str = "SEKA") -> bytes:
    """One of the types a reader of orders skips, with its fields."""
    s = _stock(stock)
    bodies = {
        "Y": s + b"0",  # Reg SHO: stock, action
        "L": b"MPID" + s + b"YNA",  # participant position: MPID, stock, primary, mode, state
        "V": struct.pack(">QQQ", 1, 2, 3),  # MWCB decline levels 1 to 3
        "W": b"1",  # MWCB status: level breached
        "K": s + struct.pack(">I", 36000) + b"A" + struct.pack(">I", 100_000),  # IPO quoting
        "J": s + struct.pack(">IIII", 1, 2, 3, 4),  # LULD auction collar
        "h": s + b"QH",  # operational halt: market code, action
        "B": struct.pack(">Q", 9),  # broken trade: match number
        # imbalance: paired, imbalance, direction, stock, far, near, reference, type, variation
        "I": struct.pack(">QQ", 1, 2) + b"B" + s + struct.pack(">III", 1, 2, 3) + b"OL",
        "N": s + b"B",  # retail price improvement
        # direct listing: stock, eligibility, min, max, near price, near time, lower, upper
        "O": s + b"Y" + struct.pack(">III", 1, 2, 3) + struct.pack(">Q", 4) + b"\0" * 8,
    }
    return _head(kind, locate, clock) + bodies[kind]


SKIPPED = "YLVWKJhBINO"


def frame(messages: list[bytes]) -> bytes:
    """The messages as a file: each after its length, 2 bytes big-endian."""
    return b"".join(len(m).to_bytes(2, "big") + m for m in messages)
