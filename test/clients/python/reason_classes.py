"""The package's reason constants, and the exception class each reason (with its code) is raised as.

A fixture of test/clients/python-client.test.ts. Reads on standard input a
JSON object of reason -> numeric gRPC code (the broker's list,
src/protocol/error-reasons.ts) and prints one JSON line:
{"constants": {NAME: value, ...}, "classes": {reason: class name, ...},
 "by_code": {code name: class name} (reason ""), "hierarchy": {class: is a HoldshelfError},
 "lease_lost": [LeaseLostError's classes, its code, its str()]}.
"""

from __future__ import annotations

import json
import sys

import grpc

import holdshelf
from holdshelf import HoldshelfError, LeaseLostError, reasons
from holdshelf.errors import error_class


def code_of(number: int) -> grpc.StatusCode:
    return next(code for code in grpc.StatusCode if code.value[0] == number)


def main() -> None:
    codes: dict[str, int] = json.load(sys.stdin)
    constants = {name: value for name, value in vars(reasons).items() if name.isupper()}
    classes = {reason: HoldshelfError.of(code_of(number), reason, "m").__class__.__name__
               for reason, number in codes.items()}
    classes.update({reason: error_class(grpc.StatusCode.FAILED_PRECONDITION, reason).__name__
                    for reason in (reasons.LEASE_EXPIRED, reasons.RELEASED)})
    by_code = {code.name: HoldshelfError.of(code, "", "m").__class__.__name__ for code in grpc.StatusCode}
    exported = [getattr(holdshelf, name) for name in holdshelf.__all__]
    hierarchy = {cls.__name__: issubclass(cls, HoldshelfError)
                 for cls in exported if isinstance(cls, type) and issubclass(cls, Exception)}
    lost = LeaseLostError("h", reasons.RELEASED)
    print(json.dumps({"constants": constants, "classes": classes, "by_code": by_code, "hierarchy": hierarchy,
                      "lease_lost": [[c.__name__ for c in type(lost).__mro__[1:3]], lost.code.name, str(lost)]}))


if __name__ == "__main__":
    main()
