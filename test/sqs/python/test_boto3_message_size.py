"""Debian's boto3 (query protocol) and the default MaximumMessageSize, 1 MiB.

Run by test/sqs/sdk-default-message-size.test.ts against a broker it starts
(HOLDSHELF_SQS_ENDPOINT). Bodies of two-byte UTF-8 characters: each is
percent-encoded as six bytes, the query protocol's worst case, so a 1 MiB
message is a 3 MiB request, which the endpoint's request cap must take.
"""
import os
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

ENDPOINT = os.environ["HOLDSHELF_SQS_ENDPOINT"]
MIB = 1_048_576


@pytest.fixture(scope="module")
def client() -> Any:
    # One attempt: each test sees the endpoint's answer as it was given.
    return boto3.client(
        "sqs",
        endpoint_url=ENDPOINT,
        region_name="us-east-1",
        aws_access_key_id="test",
        aws_secret_access_key="test",
        config=Config(retries={"total_max_attempts": 1}),
    )


@pytest.fixture(scope="module")
def url(client: Any) -> str:
    return client.create_queue(QueueName="size-query")["QueueUrl"]


def test_a_new_queue_takes_1_mib(client: Any, url: str) -> None:
    attributes = client.get_queue_attributes(QueueUrl=url, AttributeNames=["MaximumMessageSize"])["Attributes"]
    assert attributes == {"MaximumMessageSize": str(MIB)}


def test_a_message_of_exactly_1_mib_round_trips(client: Any, url: str) -> None:
    body = "é" * (MIB // 2)
    assert len(body.encode("utf-8")) == MIB
    # boto3 checks MD5OfMessageBody against the body it sent.
    sent = client.send_message(QueueUrl=url, MessageBody=body)
    received = client.receive_message(QueueUrl=url, MaxNumberOfMessages=10)["Messages"]
    assert [(message["MessageId"], message["Body"]) for message in received] == [(sent["MessageId"], body)]
    client.delete_message(QueueUrl=url, ReceiptHandle=received[0]["ReceiptHandle"])


def test_a_batch_of_1_mib_in_all_is_taken(client: Any) -> None:
    batch_url = client.create_queue(QueueName="size-query-batch")["QueueUrl"]
    half = "é" * (MIB // 4)
    entries = [{"Id": "a", "MessageBody": half}, {"Id": "b", "MessageBody": half}]
    result = client.send_message_batch(QueueUrl=batch_url, Entries=entries)
    assert sorted(entry["Id"] for entry in result["Successful"]) == ["a", "b"]
    assert "Failed" not in result


def test_one_byte_more_is_refused_and_nothing_is_stored(client: Any, url: str) -> None:
    with pytest.raises(ClientError) as refused:
        client.send_message(QueueUrl=url, MessageBody="é" * (MIB // 2) + "x")
    assert (refused.value.response["Error"]["Code"], refused.value.response["ResponseMetadata"]["HTTPStatusCode"]) == (
        "InvalidParameterValue",
        400,
    )
    attributes = client.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"])["Attributes"]
    assert attributes == {"ApproximateNumberOfMessages": "0"}


def test_a_1_mib_message_of_binary_attributes_fits_the_request_cap(client: Any, url: str) -> None:
    # Bytes whose base64 is all "+", each form-encoded as "%2B": four request bytes a message byte,
    # the query protocol's worst case. Body "x", name "b", type "Binary": 8 bytes of the 1 MiB.
    value = bytes([0xFB, 0xEF, 0xBE]) * ((MIB - 8) // 3) + bytes([0xFB, 0xEF, 0xBE])[: (MIB - 8) % 3]
    attributes = {"b": {"DataType": "Binary", "BinaryValue": value}}
    client.send_message(QueueUrl=url, MessageBody="x", MessageAttributes=attributes)
    received = client.receive_message(QueueUrl=url, MessageAttributeNames=["All"])["Messages"]
    assert [message["MessageAttributes"]["b"]["BinaryValue"] for message in received] == [value]
    client.delete_message(QueueUrl=url, ReceiptHandle=received[0]["ReceiptHandle"])
