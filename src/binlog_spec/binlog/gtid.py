"""GTID sets, MySQL's and MariaDB's, for --include-gtids / --exclude-gtids.

MySQL: ``uuid:1-5:7,uuid:tag:1-3`` (an interval list per source UUID, with
optional 8.4 tags; a bare ``uuid:tag`` element switches the tag for the
intervals after it, as MySQL's own syntax does).
MariaDB: ``domain-server-seq`` elements, or ``domain-server-first-last``
ranges, comma separated: ``0-1-100,0-1-200-300``.
"""
from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field

from binlog_spec.errors import GtidSetError

_UUID = re.compile(r"^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$")
_TAG = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,31}$")


def _interval(text: str, where: str) -> tuple[int, int]:
    parts = text.split("-")
    try:
        if len(parts) == 1:
            lo = hi = int(parts[0])
        elif len(parts) == 2:
            lo, hi = int(parts[0]), int(parts[1])
        else:
            raise ValueError
    except ValueError:
        raise GtidSetError(f"bad interval {text!r} in {where!r}") from None
    if lo < 1 or hi < lo:
        raise GtidSetError(f"bad interval {text!r} in {where!r}")
    return lo, hi


@dataclass(frozen=True)
class GtidSet:
    #: (uuid, tag) -> closed intervals, for MySQL GTIDs.
    mysql: dict = field(default_factory=dict)
    #: (domain, server) -> closed intervals of seq_no; server None matches any server.
    mariadb: dict = field(default_factory=dict)

    @classmethod
    def parse(cls, text: str) -> "GtidSet":
        mysql: dict[tuple[str, str], list[tuple[int, int]]] = {}
        mariadb: dict[tuple[int, int | None], list[tuple[int, int]]] = {}
        for element in (e.strip() for e in text.replace("\n", "").split(",")):
            if not element:
                continue
            head = element.split(":")[0]
            if _UUID.match(head):
                sid = str(uuid.UUID(head))
                tag = ""
                for part in element.split(":")[1:]:
                    if _TAG.match(part):
                        tag = part.lower()
                        continue
                    mysql.setdefault((sid, tag), []).append(_interval(part, element))
                continue
            nums = element.split("-")
            try:
                values = [int(n) for n in nums]
            except ValueError:
                raise GtidSetError(f"not a MySQL (uuid:interval) or MariaDB (domain-server-seq) GTID: "
                                   f"{element!r}") from None
            if len(values) == 3:
                mariadb.setdefault((values[0], values[1]), []).append((values[2], values[2]))
            elif len(values) == 4 and values[3] >= values[2]:
                mariadb.setdefault((values[0], values[1]), []).append((values[2], values[3]))
            else:
                raise GtidSetError(f"bad MariaDB GTID {element!r}: expected domain-server-seq "
                                   "or domain-server-first-last")
        return cls(mysql, mariadb)

    def __str__(self) -> str:
        """The set as `parse` reads it (uuid[:tag]:lo-hi, domain-server-seq / domain-server-first-last)."""
        out = [f"{sid}{':' + tag if tag else ''}:{lo}-{hi}" if lo != hi else f"{sid}{':' + tag if tag else ''}:{lo}"
               for (sid, tag), spans in self.mysql.items() for lo, hi in spans]
        out += [f"{d}-{srv}-{lo}" + (f"-{hi}" if hi != lo else "")
                for (d, srv), spans in self.mariadb.items() for lo, hi in spans]
        return ",".join(out)

    def __contains__(self, gtid: str | None) -> bool:
        if not gtid or gtid == "ANONYMOUS":
            return False
        if ":" in gtid:  # uuid[:tag]:gno
            parts = gtid.split(":")
            sid, gno = parts[0], int(parts[-1])
            tag = parts[1].lower() if len(parts) == 3 else ""
            return any(lo <= gno <= hi for lo, hi in self.mysql.get((sid, tag), ()))
        domain, server, seq = (int(x) for x in gtid.split("-"))
        return any(lo <= seq <= hi for lo, hi in self.mariadb.get((domain, server), ()))


@dataclass(frozen=True)
class GtidPosition:
    """A MariaDB GTID position, ``domain-server-seq[,...]`` (one per domain), as mariadb-binlog takes for
    --start-position / --stop-position: the state reached in each domain. Sequence numbers are
    compared within a domain; the server id is not compared (as in a replica's gtid_slave_pos)."""

    #: domain -> seq_no.
    seqs: tuple[tuple[int, int], ...]
    #: The position as given, server ids included (what a server is asked to start after: remote.streams).
    text: str = field(default="", compare=False, repr=False)

    @classmethod
    def parse(cls, text: str) -> "GtidPosition":
        seqs: dict[int, int] = {}
        for element in (e.strip() for e in text.split(",")):
            if not element:
                continue
            try:
                domain, _server, seq = (int(x) for x in element.split("-"))
            except ValueError:
                raise GtidSetError(f"not a MariaDB GTID (domain-server-seq): {element!r}") from None
            if domain in seqs:
                raise GtidSetError(f"domain {domain} twice in the GTID position {text!r}")
            seqs[domain] = seq
        if not seqs:
            raise GtidSetError(f"no GTID in {text!r}")
        return cls(tuple(sorted(seqs.items())), ",".join(e.strip() for e in text.split(",") if e.strip()))

    def __str__(self) -> str:
        """The state per domain (the server id, which is not compared, as 0): domain-0-seq,..."""
        return ",".join(f"{d}-0-{seq}" for d, seq in self.seqs)

    def _seq(self, gtid: str | None) -> tuple[int | None, int]:
        if not gtid or ":" in gtid or gtid.count("-") != 2:
            return None, 0
        domain, _server, seq = (int(x) for x in gtid.split("-"))
        return dict(self.seqs).get(domain), seq

    def after(self, gtid: str | None) -> bool:
        """A start position: the transaction comes after the state (or its domain is not listed)."""
        bound, seq = self._seq(gtid)
        return bound is None or seq > bound

    def reached_by(self, gtid: str | None) -> bool:
        """A stop position: the transaction is at or before the state (or its domain is not listed)."""
        bound, seq = self._seq(gtid)
        return bound is None or seq <= bound
