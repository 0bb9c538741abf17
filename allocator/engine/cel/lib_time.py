"""CEL timestamps and durations (standard library): conversions, arithmetic, comparisons, getters.

A timestamp is nanoseconds since the Unix epoch plus the UTC offset it was written
with; a duration is nanoseconds in Go's int64 range. Parsing follows Go:
RFC 3339 for timestamps, time.ParseDuration for durations.
"""
from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal

from .errors import EvalError
from .library import declare, extend
from .values import INT64_MAX, INT64_MIN

NS = 1_000_000_000
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
# CEL's timestamp range: 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999999999Z.
MIN_SECONDS = -62135596800
MAX_SECONDS = 253402300799


class Timestamp:
    __slots__ = ("ns", "offset")
    cel_type_name = "google.protobuf.Timestamp"

    def __init__(self, ns: int, offset: int = 0):
        if not MIN_SECONDS * NS <= ns <= MAX_SECONDS * NS + NS - 1:
            raise EvalError("timestamp out of range")
        self.ns = ns
        self.offset = offset  # seconds east of UTC, for string()

    def __eq__(self, other):
        return isinstance(other, Timestamp) and other.ns == self.ns

    def __hash__(self):
        return hash(("timestamp", self.ns))

    def datetime(self, tz=None) -> dt.datetime:
        tz = tz or dt.timezone(dt.timedelta(seconds=self.offset))
        return (_EPOCH + dt.timedelta(microseconds=self.ns // 1000)).astimezone(tz)

    def __str__(self):
        moment = self.datetime()
        text = moment.strftime("%Y-%m-%dT%H:%M:%S")
        fraction = self.ns % NS
        if fraction:
            text += "." + f"{fraction:09d}".rstrip("0")
        if self.offset == 0:
            return text + "Z"
        sign = "+" if self.offset > 0 else "-"
        hours, minutes = divmod(abs(self.offset) // 60, 60)
        return f"{text}{sign}{hours:02d}:{minutes:02d}"


class Duration:
    __slots__ = ("ns",)
    cel_type_name = "google.protobuf.Duration"

    def __init__(self, ns: int):
        if not INT64_MIN <= ns <= INT64_MAX:
            raise EvalError("integer overflow")
        self.ns = ns

    def __eq__(self, other):
        return isinstance(other, Duration) and other.ns == self.ns

    def __hash__(self):
        return hash(("duration", self.ns))

    def __str__(self):
        seconds = Decimal(self.ns) / NS
        text = format(seconds.normalize(), "f")
        return text + "s"


_RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})\Z"
)


def parse_timestamp(text: str) -> Timestamp:
    match = _RFC3339.match(text)
    if match is None:
        raise EvalError(f'parsing time "{text}" as "2006-01-02T15:04:05Z07:00": cannot parse')
    year, month, day, hour, minute, second = (int(g) for g in match.groups()[:6])
    fraction, zone = match.group(7), match.group(8)
    try:
        moment = dt.datetime(year, month, day, hour, minute, second, tzinfo=dt.timezone.utc)
    except ValueError:
        raise EvalError(f'parsing time "{text}": day out of range') from None
    offset = 0
    if zone != "Z":
        hours, minutes = int(zone[1:3]), int(zone[4:6])
        if hours > 23 or minutes > 59:
            raise EvalError(f'parsing time "{text}": time zone offset out of range')
        offset = (hours * 3600 + minutes * 60) * (1 if zone[0] == "+" else -1)
    seconds = int((moment - _EPOCH).total_seconds()) - offset
    nanos = int((fraction[1:] + "000000000")[:9]) if fraction else 0
    return Timestamp(seconds * NS + nanos, offset)


_UNITS = {"ns": 1, "us": 1_000, "µs": 1_000, "μs": 1_000, "ms": 1_000_000, "s": NS, "m": 60 * NS, "h": 3600 * NS}
_DURATION_PART = re.compile(r"(\d*)(?:\.(\d*))?([a-zµμ]+)")


def parse_duration(text: str) -> Duration:
    def bad():
        return EvalError(f'time: invalid duration "{text}"')

    rest = text
    sign = 1
    if rest[:1] in "+-" and rest:
        sign = -1 if rest[0] == "-" else 1
        rest = rest[1:]
    if rest == "0":
        return Duration(0)
    if not rest:
        raise bad()
    total = Decimal(0)
    while rest:
        match = _DURATION_PART.match(rest)
        if match is None or (not match.group(1) and not match.group(2)):
            raise bad()
        whole, fraction, unit = match.groups()
        if unit not in _UNITS:
            raise EvalError(f'time: unknown unit "{unit}" in duration "{text}"')
        value = Decimal(whole or "0") + (Decimal("0." + fraction) if fraction else 0)
        total += value * _UNITS[unit]
        rest = rest[match.end():]
    ns = int(total) * sign
    if not INT64_MIN <= ns <= INT64_MAX:
        raise EvalError(f'time: invalid duration "{text}"')
    return Duration(ns)


def _zone(name: str):
    if ":" in name:
        match = re.fullmatch(r"([+-]?)(\d{1,2}):(\d{2})", name)
        if match is None:
            raise EvalError(f"invalid timezone: {name}")
        minutes = int(match.group(2)) * 60 + int(match.group(3))
        return dt.timezone(dt.timedelta(minutes=-minutes if match.group(1) == "-" else minutes))
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError  # for the first named time zone

    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise EvalError(f"unknown time zone {name}") from None


def _timestamp(value):
    if isinstance(value, Timestamp):
        return value
    if type(value) is str:
        return parse_timestamp(value)
    if type(value) is int:
        return Timestamp(value * NS)
    raise EvalError("no such overload: timestamp")


def _duration(value):
    if isinstance(value, Duration):
        return value
    if type(value) is str:
        return parse_duration(value)
    raise EvalError("no such overload: duration")


def _getter(field):
    def get(value, zone=None):
        if isinstance(value, Duration):
            per = {"getHours": 3600 * NS, "getMinutes": 60 * NS, "getSeconds": NS, "getMilliseconds": 1_000_000}
            if field == "getMilliseconds":
                return int((abs(value.ns) % NS) // 1_000_000) * (1 if value.ns >= 0 else -1)
            return int(value.ns / per[field])
        if not isinstance(value, Timestamp):
            raise EvalError(f"no such overload: {field}")
        moment = value.datetime(_zone(zone) if zone is not None else dt.timezone.utc)
        return {
            "getFullYear": lambda: moment.year,
            "getMonth": lambda: moment.month - 1,
            "getDayOfYear": lambda: moment.timetuple().tm_yday - 1,
            "getDayOfMonth": lambda: moment.day - 1,
            "getDate": lambda: moment.day,
            "getDayOfWeek": lambda: (moment.weekday() + 1) % 7,
            "getHours": lambda: moment.hour,
            "getMinutes": lambda: moment.minute,
            "getSeconds": lambda: moment.second,
            "getMilliseconds": lambda: (value.ns % NS) // 1_000_000,
        }[field]()
    return get


def _is_time(value) -> bool:
    return isinstance(value, (Timestamp, Duration))


def _add(a, b):
    if isinstance(a, Duration) and isinstance(b, Duration):
        return Duration(a.ns + b.ns)
    if isinstance(a, Timestamp) and isinstance(b, Duration):
        return Timestamp(a.ns + b.ns, a.offset)
    if isinstance(a, Duration) and isinstance(b, Timestamp):
        return Timestamp(a.ns + b.ns, b.offset)
    raise EvalError("no such overload: _+_")


def _subtract(a, b):
    if isinstance(a, Timestamp) and isinstance(b, Timestamp):
        return Duration(a.ns - b.ns)
    if isinstance(a, Timestamp) and isinstance(b, Duration):
        return Timestamp(a.ns - b.ns, a.offset)
    if isinstance(a, Duration) and isinstance(b, Duration):
        return Duration(a.ns - b.ns)
    raise EvalError("no such overload: _-_")


def _relation(function, test):
    def impl(a, b):
        if type(a) is not type(b):
            raise EvalError(f"no such overload: {function}")
        return test((a.ns > b.ns) - (a.ns < b.ns))
    return impl


declare("timestamp", ("string_to_timestamp", "(string) -> timestamp"), ("int64_to_timestamp", "(int) -> timestamp"),
        ("timestamp_to_timestamp", "(timestamp) -> timestamp"), impl=_timestamp)
declare("duration", ("string_to_duration", "(string) -> duration"),
        ("duration_to_duration", "(duration) -> duration"), impl=_duration)
for _field in ("getFullYear", "getMonth", "getDayOfYear", "getDayOfMonth", "getDate", "getDayOfWeek"):
    declare(_field, (f"timestamp_to_{_field}", "timestamp.() -> int"),
            (f"timestamp_to_{_field}_with_tz", "timestamp.(string) -> int"), impl=_getter(_field))
for _field in ("getHours", "getMinutes", "getSeconds", "getMilliseconds"):
    declare(_field, (f"timestamp_to_{_field}", "timestamp.() -> int"),
            (f"timestamp_to_{_field}_with_tz", "timestamp.(string) -> int"),
            (f"duration_to_{_field}", "duration.() -> int"), impl=_getter(_field))

extend("_+_", ("add_timestamp_duration", "(timestamp, duration) -> timestamp"),
       ("add_duration_timestamp", "(duration, timestamp) -> timestamp"),
       ("add_duration_duration", "(duration, duration) -> duration"),
       handles=lambda a, b: _is_time(a) or _is_time(b), impl=_add)
extend("_-_", ("subtract_timestamp_timestamp", "(timestamp, timestamp) -> duration"),
       ("subtract_timestamp_duration", "(timestamp, duration) -> timestamp"),
       ("subtract_duration_duration", "(duration, duration) -> duration"),
       handles=lambda a, b: _is_time(a) or _is_time(b), impl=_subtract)
for _name, _id, _test in (("_<_", "less", lambda c: c < 0), ("_<=_", "less_equals", lambda c: c <= 0),
                          ("_>_", "greater", lambda c: c > 0), ("_>=_", "greater_equals", lambda c: c >= 0)):
    extend(_name, (f"{_id}_timestamp", "(timestamp, timestamp) -> bool"),
           (f"{_id}_duration", "(duration, duration) -> bool"),
           handles=lambda a, b: _is_time(a) and _is_time(b), impl=_relation(_name, _test))
extend("string", ("timestamp_to_string", "(timestamp) -> string"), ("duration_to_string", "(duration) -> string"),
       handles=_is_time, impl=str)
extend("int", ("timestamp_to_int64", "(timestamp) -> int"), ("duration_to_int64", "(duration) -> int"),
       handles=_is_time, impl=lambda v: v.ns // NS if isinstance(v, Timestamp) else v.ns)
