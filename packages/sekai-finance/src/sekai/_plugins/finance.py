"""sekai-finance's plugin: registers the market envs and their native vector versions, adds
``sekai.finance`` to the names of ``sekai``, and adds ``sekai data`` (convert order-event files
into a Parquet store, describe a store or a file).

This module stays small and imports nothing heavy: the envs are strings, and ``sekai data``
imports its code (``sekai.finance.lob.store``) when it runs.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from sekai.hookspecs import hookimpl

_ENVS = "sekai.envs.finance"


@hookimpl
def sekai_register_envs(register: Callable[..., Any]) -> None:
    register(
        "Trading-v0",
        entry_point=f"{_ENVS}.trading:TradingEnv",
        vector_entry_point=f"{_ENVS}.trading_vec:TradingVecEnv",
    )
    register(
        "Portfolio-v0",
        entry_point=f"{_ENVS}.portfolio:PortfolioEnv",
        vector_entry_point=f"{_ENVS}.portfolio_vec:PortfolioVecEnv",
    )
    register(
        "MarketMaking-v0",
        entry_point=f"{_ENVS}.market_making:MarketMakingEnv",
        vector_entry_point=f"{_ENVS}.market_making_vec:MarketMakingVecEnv",
    )
    register(
        "OptimalExecution-v0",
        entry_point=f"{_ENVS}.execution:OptimalExecutionEnv",
        vector_entry_point=f"{_ENVS}.execution_vec:OptimalExecutionVecEnv",
    )
    register(
        "LimitOrderBook-v0",
        entry_point=f"{_ENVS}.limit_order_book:LimitOrderBookMarket",
        vector_entry_point=f"{_ENVS}.limit_order_book_vec:LimitOrderBookVecEnv",
    )
    register(
        "LobsterReplay-v0",
        entry_point=f"{_ENVS}.lobster_replay:LobsterReplayEnv",
        vector_entry_point=f"{_ENVS}.lobster_replay_vec:LobsterReplayVecEnv",
    )
    register(
        "ReplayExecution-v0",
        entry_point=f"{_ENVS}.replay_execution:ReplayExecutionEnv",
        vector_entry_point=f"{_ENVS}.replay_execution_vec:ReplayExecutionVecEnv",
    )
    register(
        "DepthReplay-v0",
        entry_point=f"{_ENVS}.depth_replay:DepthReplayEnv",
        vector_entry_point=f"{_ENVS}.depth_replay_vec:DepthReplayVecEnv",
    )
    register(
        "LobsterReplayMarket-v0", entry_point=f"{_ENVS}.lobster_replay_market:LobsterReplayMarket"
    )


@hookimpl
def sekai_register_names(register: Callable[..., None]) -> None:
    register("finance", "sekai.finance")


@hookimpl
def sekai_add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``sekai data convert`` and ``sekai data info``: their arguments here, their code in
    ``sekai.finance.lob.store`` (``convert`` and ``describe``)."""
    command = commands.add_parser(
        "data",
        help="convert order-event files into a Parquet store; describe a store or a file",
        description="Order-event data: `convert` reads LOBSTER message files, NASDAQ ITCH 5.0 "
        "and Databento MBO files into a Parquet event store (one file per symbol and day; "
        "needs pyarrow); `info` prints, per symbol, the days, events, time span and prices "
        "of a store or of one such file.",
    )
    actions = command.add_subparsers(
        title="actions", required=True, metavar="ACTION", dest="action"
    )
    convert = actions.add_parser(
        "convert",
        help="write files into a Parquet event store",
        description="Write every day of every SRC file into the store DEST (created if need "
        "be; a day already there is replaced). Formats by name: LOBSTER *_message_*.csv "
        "(symbol and date from the name), NASDAQ ITCH 5.0 *.NASDAQ_ITCH50[.gz] (needs "
        "--symbol), Databento MBO *.dbn[.zst] (split by UTC date). Every file is read and "
        "checked before any day enters DEST.",
    )
    convert.add_argument("sources", nargs="+", metavar="SRC", help="files to convert")
    convert.add_argument("dest", metavar="DEST", help="the store folder")
    _add_choices(convert)
    convert.set_defaults(run=_run_convert)
    info = actions.add_parser(
        "info",
        help="describe a Parquet event store or one file",
        description="Print, per symbol, the number of days and events, the first and last "
        "event time and the price range, then the same for each day, of a store (a folder) "
        "or of one file convert reads.",
    )
    info.add_argument("path", metavar="PATH", help="a store folder or a supported file")
    _add_choices(info)
    info.set_defaults(run=_run_info)


def _add_choices(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--symbol",
        action="append",
        default=[],
        metavar="S",
        help="a symbol to read (repeat for several): the stocks of an ITCH file, the symbols "
        "of a Databento file; a store's symbols to describe",
    )
    command.add_argument(
        "--instrument-id",
        type=int,
        metavar="N",
        help="the instrument of a Databento file, by id",
    )
    command.add_argument(
        "--date",
        metavar="YYYY-MM-DD",
        help="the day of a LOBSTER or ITCH file whose name gives none (or another)",
    )


def _run_convert(args: argparse.Namespace) -> int:
    from sekai.finance.lob import store

    written = _usage(
        store.convert,
        args.sources,
        args.dest,
        symbols=args.symbol,
        instrument_id=args.instrument_id,
        date=args.date,
    )
    for day in written:
        print(f"{day.symbol} {day.date}: {day.events} events -> {day.path}")
    return 0


def _run_info(args: argparse.Namespace) -> int:
    from sekai.finance.lob import store

    text = _usage(
        store.describe,
        args.path,
        symbols=args.symbol,
        instrument_id=args.instrument_id,
        date=args.date,
    )
    print(text, end="")
    return 0


def _usage(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``function(*args, **kwargs)``, a problem with what the user named (a file, a format, a
    symbol, a missing extra) raised as the command line's one-line usage error."""
    from sekai.cli import UsageError

    try:
        return function(*args, **kwargs)
    except (ValueError, TypeError, OSError, ImportError) as error:
        raise UsageError(" ".join(str(error).split())) from None
