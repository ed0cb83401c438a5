"""Typed attributes round-trip between the Python client and the SQS endpoint (boto3), one JSON line each.

A fixture of test/clients/python-client.test.ts, run against a broker with
its SQS endpoint (--address, --sqs-endpoint):
    to_sqs     sent by the Client (a batched send, a unary send, a
               send_batch entry), received by boto3: each attribute's
               DataType and its StringValue or BinaryValue (base64 here)
    from_sqs   sent by boto3, received by the Client (receive) and by a
               Consumer (Subscribe): each as a TypedAttribute, plain
               Strings in attributes
    refused    a Binary type with a text value: INVALID_ARGUMENT naming the field
    traced     trace headers: the Client's (batched, unary, send_batch entry)
               read by boto3 as AWSTraceHeader, and boto3's read by the
               Client's receive as trace_header
"""

from __future__ import annotations

import argparse
import base64
import json
import threading
from typing import Any

import boto3

from holdshelf import (
    Client, Consumer, HandlerContext, InvalidArgumentError, ReceivedMessage, SendBatchEntry, TypedAttribute,
)

QUEUE = "py-typed"
TYPED = {
    "price": TypedAttribute.number("12.50"),
    "count": TypedAttribute.number(7, "int"),
    "blob": TypedAttribute.binary(b"\x00\xffraw"),
    "zipped": TypedAttribute.binary(b"gz", "gzip"),
    "label": TypedAttribute.string("tagged", "custom"),
}


def emit(check: str, **fields: object) -> None:
    print(json.dumps({"check": check, **fields}), flush=True)


def shown(typed: dict[str, TypedAttribute]) -> dict[str, list[str]]:
    """Typed attributes as [data_type, value], bytes as base64, for the test to compare."""
    return {name: [a.data_type, base64.b64encode(a.value).decode() if isinstance(a.value, bytes) else a.value]
            for name, a in sorted(typed.items())}


def sqs_shown(attributes: dict[str, Any]) -> dict[str, list[str]]:
    """boto3's MessageAttributes in the same form."""
    return {name: [a["DataType"], base64.b64encode(a["BinaryValue"]).decode() if "BinaryValue" in a
                   else a["StringValue"]] for name, a in sorted(attributes.items())}


def to_sqs(client: Client, unbatched: Client, sqs: Any, url: str) -> None:
    client.send(QUEUE, "batched", attributes={"plain": "text"}, typed_attributes=TYPED)
    unbatched.send(QUEUE, "unary", typed_attributes=TYPED)
    client.send_batch(QUEUE, [SendBatchEntry("entry", typed_attributes=TYPED)])
    seen: dict[str, dict[str, list[str]]] = {}
    for _ in range(10):
        answer = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, MessageAttributeNames=["All"],
                                     WaitTimeSeconds=1)
        for message in answer.get("Messages", []):
            seen[message["Body"]] = sqs_shown(message.get("MessageAttributes", {}))
            sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
        if len(seen) == 3:
            break
    emit("to_sqs", seen=seen)


def from_sqs(client: Client, sqs: Any, url: str) -> None:
    attributes = {
        "price": {"DataType": "Number", "StringValue": "12.50"},
        "blob": {"DataType": "Binary", "BinaryValue": b"\x00\xffraw"},
        "label": {"DataType": "String.custom", "StringValue": "tagged"},
        "plain": {"DataType": "String", "StringValue": "text"},
    }
    sqs.send_message(QueueUrl=url, MessageBody="to receive", MessageAttributes=attributes)
    sqs.send_message(QueueUrl=url, MessageBody="to consume", MessageAttributes=attributes)
    [received] = client.receive(QUEUE, max_messages=1, wait_time=5)
    client.delete(QUEUE, received.receipt_handle)
    consumed: list[ReceivedMessage] = []
    done = threading.Event()

    def handle(message: ReceivedMessage, ctx: HandlerContext) -> None:
        consumed.append(message)
        done.set()

    with Consumer(client, QUEUE, handle):
        done.wait(10)
    emit("from_sqs", received=[received.body.decode(), shown(received.typed_attributes), received.attributes],
         consumed=[[m.body.decode(), shown(m.typed_attributes), m.attributes] for m in consumed])


def refused(client: Client) -> None:
    try:
        client.send(QUEUE, "bad", typed_attributes={"blob": TypedAttribute("Binary", "text, not bytes")})
        emit("refused", raised=None)
    except InvalidArgumentError as error:
        emit("refused", raised=type(error).__name__, reason=error.reason,
             fields=[violation.field for violation in error.field_violations])


def traced(client: Client, unbatched: Client, sqs: Any, url: str) -> None:
    client.send(QUEUE, "batched", trace_header="Root=1-batched")
    unbatched.send(QUEUE, "unary", trace_header="Root=1-unary")
    client.send_batch(QUEUE, [SendBatchEntry("entry", trace_header="Root=1-entry")])
    seen: dict[str, str | None] = {}
    for _ in range(10):
        answer = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, AttributeNames=["AWSTraceHeader"],
                                     WaitTimeSeconds=1)
        for message in answer.get("Messages", []):
            seen[message["Body"]] = message.get("Attributes", {}).get("AWSTraceHeader")
            sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
        if len(seen) == 3:
            break
    sqs.send_message(QueueUrl=url, MessageBody="from boto3",
                     MessageSystemAttributes={"AWSTraceHeader": {"DataType": "String", "StringValue": "Root=1-boto3"}})
    [received] = client.receive(QUEUE, max_messages=1, wait_time=5)
    client.delete(QUEUE, received.receipt_handle)
    emit("traced", seen=seen, received=[received.body.decode(), received.trace_header])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--address", required=True)
    parser.add_argument("--sqs-endpoint", required=True)
    args = parser.parse_args()
    sqs = boto3.client("sqs", endpoint_url=args.sqs_endpoint, region_name="us-east-1",
                       aws_access_key_id="test", aws_secret_access_key="test")
    with Client(args.address) as client, Client(args.address, batch_delay=0) as unbatched:
        client.create_queue(QUEUE)
        url = sqs.get_queue_url(QueueName=QUEUE)["QueueUrl"]
        to_sqs(client, unbatched, sqs, url)
        from_sqs(client, sqs, url)
        refused(client)
        traced(client, unbatched, sqs, url)


if __name__ == "__main__":
    main()
