"""AWS's recorded error answers (aws-errors.json) through boto3, unchanged.

Run by boto3-errors.test.ts against a real broker, whose endpoint is in
HOLDSHELF_SQS_ENDPOINT; HOLDSHELF_SQS_PROTOCOL names the protocol this
interpreter's boto3 must speak (Debian's 1.26 speaks query). Each case's code
and HTTP status, and apart from them its message, are checked; a part with a
known difference (aws-errors.json's `differs`) is a strict xfail, so that
fixing it fails here until the integrator removes the `differs`.
"""
import json
import os
import pathlib
import re
import uuid
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

ENDPOINT = os.environ["HOLDSHELF_SQS_ENDPOINT"]
ACCOUNT = os.environ.get("HOLDSHELF_SQS_ACCOUNT", "000000000000")
PROTOCOL = os.environ.get("HOLDSHELF_SQS_PROTOCOL", "query")
CASES: list[dict[str, Any]] = json.loads(
    (pathlib.Path(__file__).parent / "aws-errors.json").read_text(encoding="utf-8")
)["cases"]
REPEAT = re.compile(r"^\$(.)\*(\d+)$")


@pytest.fixture(scope="module")
def client() -> Any:
    # One attempt, and botocore's own parameter checks off: each case reaches the endpoint's.
    sqs = boto3.client(
        "sqs",
        endpoint_url=ENDPOINT,
        region_name="us-east-1",
        aws_access_key_id="test",
        aws_secret_access_key="test",
        config=Config(retries={"total_max_attempts": 1}, parameter_validation=False),
    )
    assert sqs.meta.service_model.protocol == PROTOCOL
    return sqs


def expand(value: Any, name: str, url: str, gone_url: str) -> Any:
    """A case's parameters with aws-errors.json's placeholders filled in."""
    if isinstance(value, str):
        if value == "$url":
            return url
        if value == "$goneUrl":
            return gone_url
        repeat = REPEAT.match(value)
        if repeat:
            return repeat.group(1) * int(repeat.group(2))
        return value.replace("$name", name)
    if isinstance(value, list):
        return [expand(item, name, url, gone_url) for item in value]
    if isinstance(value, dict):
        if "$entries" in value:
            return [{"Id": f"m{i}", "ReceiptHandle": f"handle-{i}"} for i in range(value["$entries"])]
        return {key: expand(item, name, url, gone_url) for key, item in value.items()}
    return value


def snake(action: str) -> str:
    """boto3's method name of an action: CreateQueue is create_queue."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", action).lower()


def differs(case: dict[str, Any], part: str) -> bool:
    """Whether holdshelf answers this part of the case otherwise than AWS on this protocol today."""
    known = case.get("differs")
    if known is None or PROTOCOL not in known.get("on", ["json", "query"]):
        return False
    return part == "message" or known.get("part") != "message"


def params() -> list[Any]:
    """Each case twice, its code and status and its message, known differences as strict xfails."""
    out = []
    for case in CASES:
        for part in ("code", "message"):
            marks = []
            if differs(case, part):
                item = case["differs"].get("item")
                reason = f"#35 item {item}" if item is not None else "not a #35 item"
                marks.append(pytest.mark.xfail(strict=True, reason=f"{reason}: {case['differs']['why']}"))
            out.append(pytest.param(case, part, marks=marks, id=f"{case['case']} [{part}]"))
    return out


@pytest.mark.parametrize(("case", "part"), params())
def test_aws_error(client: Any, case: dict[str, Any], part: str) -> None:
    """The case's request, on a new queue of its own, is refused as AWS refused it."""
    name = "aws-" + uuid.uuid4().hex[:12] + (".fifo" if case.get("fifo") else "")
    attributes = {**({"FifoQueue": "true"} if case.get("fifo") else {}), **case.get("queueAttributes", {})}
    url = client.create_queue(QueueName=name, Attributes=attributes)["QueueUrl"]
    gone_url = f"{ENDPOINT}/{ACCOUNT}/gone-{uuid.uuid4().hex[:12]}"
    for call in case.get("before", []):
        getattr(client, snake(call["action"]))(**expand(call["params"], name, url, gone_url))
    with pytest.raises(ClientError) as raised:
        getattr(client, snake(case["action"]))(**expand(case["params"], name, url, gone_url))
    response = raised.value.response
    if part == "code":
        got = (response["Error"]["Code"], response["ResponseMetadata"]["HTTPStatusCode"])
        assert got == (case["code"], case["status"])
    else:
        expected = case.get("queryMessage", case["message"]) if PROTOCOL == "query" else case["message"]
        assert response["Error"].get("Message") == expected
