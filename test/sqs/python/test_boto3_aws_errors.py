"""AWS's recorded error answers through Debian's boto3 1.26 (the query protocol), unchanged.

Run by test/sqs/boto3-aws-errors.test.ts, which starts a broker and passes its
endpoint in HOLDSHELF_SQS_ENDPOINT. The wording is AWS's as LocalStack's
test_sqs.snapshot.json records it for the query protocol (moto's where AWS's
is not recorded); test/sqs/sdk-aws-errors.test.ts checks the JSON protocol.
The broker runs on the real clock: a delivery is superseded by releasing it
and receiving again, never by waiting out a lease.
"""
import os
import uuid

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

ENDPOINT = os.environ["HOLDSHELF_SQS_ENDPOINT"]
ACCOUNT = os.environ.get("HOLDSHELF_SQS_ACCOUNT", "000000000000")
BAD_NAME = "Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length"
BAD_TAG_KEY = "Tag keys must be between 1 and 128 characters in length."


@pytest.fixture(scope="module")
def client():
    # One attempt: each test sees the endpoint's answer as it was given.
    return boto3.client(
        "sqs",
        endpoint_url=ENDPOINT,
        region_name="us-east-1",
        aws_access_key_id="test",
        aws_secret_access_key="test",
        config=Config(retries={"total_max_attempts": 1}),
    )


@pytest.fixture
def name() -> str:
    """A queue name no other test uses: the whole module shares one broker."""
    return "e" + uuid.uuid4().hex[:12]


def error_of(call, *args, **kwargs) -> tuple[str, int, str]:
    """The ClientError a call raises: its code, HTTP status and message."""
    with pytest.raises(ClientError) as raised:
        call(*args, **kwargs)
    response = raised.value.response
    return response["Error"]["Code"], response["ResponseMetadata"]["HTTPStatusCode"], response["Error"].get("Message", "")


def invalid(message: str) -> tuple[str, int, str]:
    return ("InvalidParameterValue", 400, message)


def stored(client, url: str) -> dict[str, str]:
    names = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
    return client.get_queue_attributes(QueueUrl=url, AttributeNames=names)["Attributes"]


def test_nonexistent_queue_names_the_wsdl_version(client, name):
    expected = ("AWS.SimpleQueueService.NonExistentQueue", 400, "The specified queue does not exist for this wsdl version.")
    assert error_of(client.get_queue_attributes, QueueUrl=f"{ENDPOINT}/{ACCOUNT}/{name}") == expected
    assert error_of(client.get_queue_url, QueueName=name) == expected


def test_an_oversize_message_names_the_queues_limit(client, name):
    url = client.create_queue(QueueName=name, Attributes={"MaximumMessageSize": "1024"})["QueueUrl"]
    assert error_of(client.send_message, QueueUrl=url, MessageBody="a" * 1025) == invalid(
        "One or more parameters are invalid. Reason: Message must be shorter than 1024 bytes."
    )
    result = client.send_message_batch(
        QueueUrl=url,
        Entries=[{"Id": "fits", "MessageBody": "a" * 1024}, {"Id": "over", "MessageBody": "a" * 1025}],
    )
    assert [entry["Id"] for entry in result["Successful"]] == ["fits"]
    assert result["Failed"] == [
        {
            "Id": "over",
            "SenderFault": True,
            "Code": "InvalidParameterValue",
            "Message": "One or more parameters cannot be validated. Reason: Message must be shorter than 1024 bytes.",
        }
    ]


def test_a_bare_queue_name_is_a_queue_url(client, name):
    client.create_queue(QueueName=name)
    client.send_message(QueueUrl=name, MessageBody="by name")
    [message] = client.receive_message(QueueUrl=name)["Messages"]
    assert message["Body"] == "by name"
    client.delete_message(QueueUrl=name, ReceiptHandle=message["ReceiptHandle"])
    assert stored(client, name) == {"ApproximateNumberOfMessages": "0", "ApproximateNumberOfMessagesNotVisible": "0"}


def test_a_fifo_batch_entry_without_its_ids_fails_the_whole_call(client, name):
    url = client.create_queue(QueueName=name + ".fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]
    whole = {"Id": "whole", "MessageBody": "b", "MessageGroupId": "g", "MessageDeduplicationId": "d1"}
    groupless = {"Id": "groupless", "MessageBody": "b", "MessageDeduplicationId": "d2"}
    undeduplicated = {"Id": "undeduplicated", "MessageBody": "b", "MessageGroupId": "g"}
    assert error_of(client.send_message_batch, QueueUrl=url, Entries=[whole, groupless]) == invalid(
        "The request must contain the parameter MessageGroupId."
    )
    assert error_of(client.send_message_batch, QueueUrl=url, Entries=[whole, undeduplicated]) == invalid(
        "The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly"
    )
    assert stored(client, url) == {"ApproximateNumberOfMessages": "0", "ApproximateNumberOfMessagesNotVisible": "0"}


def test_a_visibility_change_with_a_superseded_handle_succeeds_and_changes_nothing(client, name):
    url = client.create_queue(QueueName=name)["QueueUrl"]
    client.send_message(QueueUrl=url, MessageBody="m")
    [stale] = client.receive_message(QueueUrl=url)["Messages"]
    client.change_message_visibility(QueueUrl=url, ReceiptHandle=stale["ReceiptHandle"], VisibilityTimeout=0)
    [current] = client.receive_message(QueueUrl=url, VisibilityTimeout=300)["Messages"]
    assert current["MessageId"] == stale["MessageId"]
    # Releasing with the superseded handle: OK, single and batch, and the current holder keeps the message.
    client.change_message_visibility(QueueUrl=url, ReceiptHandle=stale["ReceiptHandle"], VisibilityTimeout=0)
    result = client.change_message_visibility_batch(
        QueueUrl=url, Entries=[{"Id": "stale", "ReceiptHandle": stale["ReceiptHandle"], "VisibilityTimeout": 0}]
    )
    assert [entry["Id"] for entry in result["Successful"]] == ["stale"]
    assert result.get("Failed", []) == []
    assert client.receive_message(QueueUrl=url).get("Messages", []) == []
    assert stored(client, url) == {"ApproximateNumberOfMessages": "0", "ApproximateNumberOfMessagesNotVisible": "1"}
    # The current handle still works.
    client.delete_message(QueueUrl=url, ReceiptHandle=current["ReceiptHandle"])


def test_bad_queue_names_are_invalid_parameter_values(client):
    for bad in ["has space", "", "x" * 81, "standard.fifo"]:
        assert error_of(client.create_queue, QueueName=bad) == invalid(BAD_NAME), bad
    assert error_of(client.create_queue, QueueName="no-suffix", Attributes={"FifoQueue": "true"}) == invalid(
        "The name of a FIFO queue can only include alphanumeric characters, hyphens, or underscores, must end with .fifo suffix and be 1 to 80 in length"
    )


def test_too_many_tags_and_a_long_tag_key(client, name):
    tags = {f"k{i}": "v" for i in range(51)}
    assert error_of(client.create_queue, QueueName=name, tags=tags) == invalid(f"Too many tags added for queue {name}.")
    url = client.create_queue(QueueName=name, tags={f"k{i}": "v" for i in range(50)})["QueueUrl"]
    assert error_of(client.tag_queue, QueueUrl=url, Tags={"more": "v"}) == invalid(f"Too many tags added for queue {name}.")
    assert error_of(client.untag_queue, QueueUrl=url, TagKeys=["k1", "k" * 129]) == invalid(BAD_TAG_KEY)
    assert len(client.list_queue_tags(QueueUrl=url)["Tags"]) == 50
    client.untag_queue(QueueUrl=url, TagKeys=["k1", "k" * 128])
    assert error_of(client.tag_queue, QueueUrl=url, Tags={"k" * 129: "v"}) == invalid(BAD_TAG_KEY)


def test_receive_bounds_and_fifo_attributes_in_aws_words(client, name):
    url = client.create_queue(QueueName=name)["QueueUrl"]
    assert error_of(client.receive_message, QueueUrl=url, MaxNumberOfMessages=11) == invalid(
        "Value 11 for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 10, if provided."
    )
    assert error_of(client.receive_message, QueueUrl=url, WaitTimeSeconds=21) == invalid(
        "Value 21 for parameter WaitTimeSeconds is invalid. Reason: Must be >= 0 and <= 20, if provided."
    )
    unknown = lambda message: ("InvalidAttributeName", 400, message)  # noqa: E731
    assert error_of(client.set_queue_attributes, QueueUrl=url, Attributes={"FifoQueue": "true"}) == unknown("Unknown Attribute FifoQueue.")
    assert error_of(client.create_queue, QueueName=name + "-x", Attributes={"ContentBasedDeduplication": "false"}) == unknown(
        "Unknown Attribute ContentBasedDeduplication."
    )
    for attribute, value in [("DeduplicationScope", "queue"), ("FifoThroughputLimit", "perQueue")]:
        assert error_of(client.create_queue, QueueName=name + "-x", Attributes={attribute: value}) == unknown(
            f"You can specify the {attribute} only when FifoQueue is set to true."
        )
    fifo = client.create_queue(QueueName=name + ".fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]
    assert error_of(client.set_queue_attributes, QueueUrl=fifo, Attributes={"FifoQueue": "false"}) == (
        "InvalidAttributeValue",
        400,
        "Invalid value for the parameter FifoQueue. Reason: Modifying queue type is not supported.",
    )


def test_malformed_fifo_ids_and_an_empty_attribute_value_in_aws_words(client, name):
    plain = client.create_queue(QueueName=name)["QueueUrl"]
    fifo = client.create_queue(QueueName=name + ".fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]

    def reason(parameter: str, value: str) -> tuple[str, int, str]:
        return invalid(
            f"Value {value} for parameter {parameter} is invalid. Reason: {parameter} can only include alphanumeric and punctuation characters. 1 to 128 in length."
        )

    assert error_of(client.send_message, QueueUrl=plain, MessageBody="m", MessageGroupId="group 123") == reason("MessageGroupId", "group 123")
    for value in ["", "a" * 129]:
        assert error_of(client.send_message, QueueUrl=fifo, MessageBody="m", MessageGroupId="g", MessageDeduplicationId=value) == reason(
            "MessageDeduplicationId", value
        )
    empty = {"ErrorDetails": {"DataType": "String", "StringValue": ""}}
    assert error_of(client.send_message, QueueUrl=plain, MessageBody="m", MessageAttributes=empty) == invalid(
        "Message (user) attribute 'ErrorDetails' must contain a non-empty value of type 'String'."
    )
