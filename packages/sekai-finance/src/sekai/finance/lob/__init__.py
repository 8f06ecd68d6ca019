"""The limit order book: everything sekai knows about order books, in one place.

- ``book``: ``OrderBook``, the object API and the reference every compiled path is tested against;
- ``_engine``: the matching rules as numba kernels over level arrays, written once for every user;
- ``flow``: the Cont-Stoikov-Talreja background order flow;
- ``lobster``: LOBSTER files (read, write, replay into an ``OrderBook``, record a flow);
- ``events``: the one order-event schema every data reader yields;
- ``itch``: NASDAQ TotalView-ITCH 5.0 files, one stock's messages as events;
- ``databento``: Databento DBN files (MBO as events, MBP-1/MBP-10 as level rows), through the
  optional extra ``sekai-finance[databento]``, imported only when a file is read;
- ``store``: the Parquet event store (one file per symbol and day) behind ``sekai data``,
  through the optional extra ``sekai-finance[parquet]``, imported only when a day is written
  or read;
- ``_replay_kernel``, ``_replay_day``, ``_replay_days``, ``_replay_windows``: a replayed day as
  arrays, and many windows of agent orders in its real FIFO queues, one compiled call a step;
- ``market``, ``level_books``: the simulated multi-agent market (its rules, many books at once);
- ``replay_model``: the replay market the replay envs drive;
- ``order_replay``: ``replay_orders``, a schedule of orders backtested on a replayed day in one
  compiled call (``_order_replay``), fill by fill the replay env's;
- ``depth``, ``queue_models``: depth-only data (level sizes and trades) and the queue models
  that estimate an agent order's place in a level without order ids; ``_queue_kernel``,
  ``_depth_day``, ``_depth_windows``: their compiled arithmetic, a depth day replayed once,
  and its windows; ``depth_model``: the depth replay market ``DepthReplay-v0`` drives.

The envs in ``sekai.envs.finance`` are thin drivers over the public modules here. A new data
format is a reader module beside ``lobster``; numba is imported only by the compiled modules, so
importing this package (or ``sekai.finance``) does not compile anything.
"""

from sekai.finance.lob.book import (
    BUY,
    LEGACY,
    PUBLIC,
    SELL,
    Order,
    OrderBook,
    Trade,
    TradingHalted,
)
from sekai.finance.lob.flow import (
    CANCEL,
    LIMIT,
    MARKET,
    ContStoikovTalreja,
    FlowEvents,
    simulate_flow,
)
from sekai.finance.lob.order_replay import FILL_DTYPE, ORDER_DTYPE, QUOTE, replay_orders

__all__ = [
    "BUY",
    "CANCEL",
    "FILL_DTYPE",
    "LEGACY",
    "LIMIT",
    "MARKET",
    "ORDER_DTYPE",
    "PUBLIC",
    "QUOTE",
    "SELL",
    "ContStoikovTalreja",
    "FlowEvents",
    "Order",
    "OrderBook",
    "Trade",
    "TradingHalted",
    "replay_orders",
    "simulate_flow",
]
