"""FIFO queues through boto3, unchanged: Debian's 1.26 (the query protocol) or a current one (JSON).

Run by test/sqs/boto3-fifo.test.ts, which starts a broker and passes its
endpoint in HOLDSHELF_SQS_ENDPOINT, and the protocol the interpreter's boto3
must speak in HOLDSHELF_SQS_PROTOCOL. Both report SQS's legacy error codes
(a current boto3 reads them from the JSON answers' x-amzn-query-error
header), so the same assertions hold. The broker runs on the real clock:
redeliveries come from ChangeMessageVisibility or a zero VisibilityTimeout,
never from waiting out a lease.
"""
import hashlib
import json
import os
import time
import uuid

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

ENDPOINT = os.environ["HOLDSHELF_SQS_ENDPOINT"]
ACCOUNT = os.environ.get("HOLDSHELF_SQS_ACCOUNT", "000000000000")
PROTOCOL = os.environ.get("HOLDSHELF_SQS_PROTOCOL", "query")


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
def name():
    """A FIFO queue name no other test uses: the whole module shares one broker."""
    return "f" + uuid.uuid4().hex[:12] + ".fifo"


def arn_of(queue):
    return f"arn:aws:sqs:us-east-1:{ACCOUNT}:{queue}"


def create_fifo(client, queue, **attributes):
    return client.create_queue(QueueName=queue, Attributes={"FifoQueue": "true", **attributes})["QueueUrl"]


def error_of(call, **kwargs):
    """The code and HTTP status of the ClientError a call raises, and its message."""
    with pytest.raises(ClientError) as raised:
        call(**kwargs)
    response = raised.value.response
    return response["Error"]["Code"], response["ResponseMetadata"]["HTTPStatusCode"], response["Error"].get("Message", "")


def send(client, url, body, group, **kwargs):
    return client.send_message(QueueUrl=url, MessageBody=body, MessageGroupId=group, **{"MessageDeduplicationId": body, **kwargs})


def receive(client, url, maximum=10, **kwargs):
    return client.receive_message(QueueUrl=url, MaxNumberOfMessages=maximum, AttributeNames=["All"], **kwargs).get("Messages", [])


def bodies(messages):
    return [message["Body"] for message in messages]


def release(client, url, message):
    client.change_message_visibility(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"], VisibilityTimeout=0)


def test_boto3_speaks_the_expected_protocol(client):
    assert client.meta.service_model.protocol == PROTOCOL, boto3.__version__


def test_creates_a_fifo_queue_and_reports_its_attributes(client, name):
    url = create_fifo(client, name, ContentBasedDeduplication="true")
    assert url.endswith("/" + name)
    attributes = client.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert {key: attributes[key] for key in ["FifoQueue", "ContentBasedDeduplication", "DeduplicationScope", "FifoThroughputLimit"]} == {
        "FifoQueue": "true",
        "ContentBasedDeduplication": "true",
        "DeduplicationScope": "queue",
        "FifoThroughputLimit": "perQueue",
    }
    client.set_queue_attributes(QueueUrl=url, Attributes={"DeduplicationScope": "messageGroup", "FifoThroughputLimit": "perMessageGroupId"})
    named = client.get_queue_attributes(QueueUrl=url, AttributeNames=["DeduplicationScope", "FifoThroughputLimit"])["Attributes"]
    assert named == {"DeduplicationScope": "messageGroup", "FifoThroughputLimit": "perMessageGroupId"}
    standard = client.create_queue(QueueName=name[: -len(".fifo")])["QueueUrl"]
    assert "FifoQueue" not in client.get_queue_attributes(QueueUrl=standard, AttributeNames=["All"])["Attributes"]


def test_a_group_is_delivered_in_order_across_redeliveries(client, name):
    url = create_fifo(client, name)
    for body in ["a1", "a2", "a3"]:
        send(client, url, body, "a")
    [first] = receive(client, url, maximum=1)
    assert first["Body"] == "a1"
    # Locked while a1 is in flight.
    assert receive(client, url) == []
    release(client, url, first)
    [again] = receive(client, url, maximum=1)
    assert (again["Body"], again["Attributes"]["ApproximateReceiveCount"]) == ("a1", "2")
    release(client, url, again)
    messages = receive(client, url)
    assert bodies(messages) == ["a1", "a2", "a3"]
    client.delete_message_batch(QueueUrl=url, Entries=[{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(messages)])
    assert receive(client, url) == []


def test_groups_are_independent(client, name):
    url = create_fifo(client, name)
    for body, group in [("x1", "x"), ("y1", "y"), ("x2", "x"), ("y2", "y")]:
        send(client, url, body, group)
    [x1] = receive(client, url, maximum=1)
    assert x1["Body"] == "x1"
    assert bodies(receive(client, url)) == ["y1", "y2"]
    client.delete_message(QueueUrl=url, ReceiptHandle=x1["ReceiptHandle"])
    assert bodies(receive(client, url)) == ["x2"]


def test_a_retried_receive_with_its_attempt_id_gets_the_same_messages(client, name):
    url = create_fifo(client, name)
    for body in ["r1", "r2", "r3"]:
        send(client, url, body, "r")
    first = receive(client, url, maximum=2, ReceiveRequestAttemptId="attempt-1")
    assert bodies(first) == ["r1", "r2"]
    retry = receive(client, url, maximum=2, ReceiveRequestAttemptId="attempt-1")
    assert [m["ReceiptHandle"] for m in retry] == [m["ReceiptHandle"] for m in first]
    # Another id is a new receive: the group is locked by the first answer.
    assert receive(client, url, ReceiveRequestAttemptId="attempt-2") == []
    # Once the answer is settled in part, the same id is a new receive too.
    client.delete_message(QueueUrl=url, ReceiptHandle=first[0]["ReceiptHandle"])
    release(client, url, first[1])
    assert bodies(receive(client, url, ReceiveRequestAttemptId="attempt-1")) == ["r2", "r3"]
    code, status, message = error_of(client.receive_message, QueueUrl=url, ReceiveRequestAttemptId="has space")
    assert (code, status) == ("InvalidParameterValue", 400) and "ReceiveRequestAttemptId" in message


def test_a_duplicate_gets_the_first_sends_message_id_and_sequence_number(client, name):
    url = create_fifo(client, name)
    first = send(client, url, "order", "g", MessageDeduplicationId="d-1")
    assert len(first["SequenceNumber"]) == 20 and first["SequenceNumber"].isdigit()
    repeat = send(client, url, "order, again", "g", MessageDeduplicationId="d-1")
    assert (repeat["MessageId"], repeat["SequenceNumber"]) == (first["MessageId"], first["SequenceNumber"])
    assert repeat["MD5OfMessageBody"] == hashlib.md5(b"order, again").hexdigest()
    [message] = receive(client, url)
    assert message["Attributes"]["MessageDeduplicationId"] == "d-1"
    assert message["Attributes"]["SequenceNumber"] == first["SequenceNumber"]
    assert message["Attributes"]["MessageGroupId"] == "g"
    # Remembered after the delete too.
    client.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
    assert send(client, url, "order", "g", MessageDeduplicationId="d-1")["MessageId"] == first["MessageId"]
    assert client.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"])["Attributes"] == {"ApproximateNumberOfMessages": "0"}


def test_content_based_deduplication(client, name):
    url = create_fifo(client, name, ContentBasedDeduplication="true")
    first = client.send_message(QueueUrl=url, MessageBody="same", MessageGroupId="g")
    assert client.send_message(QueueUrl=url, MessageBody="same", MessageGroupId="g")["MessageId"] == first["MessageId"]
    other = client.send_message(QueueUrl=url, MessageBody="different", MessageGroupId="g")
    assert other["MessageId"] != first["MessageId"]
    assert int(other["SequenceNumber"]) > int(first["SequenceNumber"])
    messages = receive(client, url)
    assert [(m["Body"], m["Attributes"]["MessageDeduplicationId"]) for m in messages] == [
        ("same", hashlib.sha256(b"same").hexdigest()),
        ("different", hashlib.sha256(b"different").hexdigest()),
    ]


def test_batches_carry_sequence_numbers_and_fail_entry_by_entry(client, name):
    url = create_fifo(client, name)
    result = client.send_message_batch(
        QueueUrl=url,
        Entries=[
            {"Id": "a", "MessageBody": "a", "MessageGroupId": "g", "MessageDeduplicationId": "a"},
            {"Id": "delayed", "MessageBody": "n", "MessageGroupId": "g", "MessageDeduplicationId": "n", "DelaySeconds": 5},
            {"Id": "b", "MessageBody": "b", "MessageGroupId": "g", "MessageDeduplicationId": "b", "DelaySeconds": 0},
            {"Id": "again", "MessageBody": "a", "MessageGroupId": "g", "MessageDeduplicationId": "a"},
        ],
    )
    successful = {entry["Id"]: entry for entry in result["Successful"]}
    assert sorted(successful) == ["a", "again", "b"]
    assert successful["again"]["SequenceNumber"] == successful["a"]["SequenceNumber"]
    assert int(successful["b"]["SequenceNumber"]) > int(successful["a"]["SequenceNumber"])
    assert [(entry["Id"], entry["Code"], entry["SenderFault"]) for entry in result["Failed"]] == [("delayed", "InvalidParameterValue", True)]
    assert bodies(receive(client, url)) == ["a", "b"]


def test_errors_as_sqs_answers_them(client, name):
    url = create_fifo(client, name)
    standard = client.create_queue(QueueName="s" + uuid.uuid4().hex[:12])["QueueUrl"]
    code = lambda call, **kwargs: error_of(call, **kwargs)[:2]  # noqa: E731
    assert code(client.send_message, QueueUrl=url, MessageBody="b", MessageDeduplicationId="d") == ("MissingParameter", 400)
    error_code, status, message = error_of(client.send_message, QueueUrl=url, MessageBody="b", MessageGroupId="g")
    assert (error_code, status) == ("InvalidParameterValue", 400)
    assert "ContentBasedDeduplication" in message
    assert code(client.send_message, QueueUrl=url, MessageBody="b", MessageGroupId="g", MessageDeduplicationId="d", DelaySeconds=5) == ("InvalidParameterValue", 400)
    # A group alone on a standard queue is a fair queue's send (SQS since 2025): stored, the group dropped.
    assert client.send_message(QueueUrl=standard, MessageBody="b", MessageGroupId="g")["MessageId"]
    assert code(client.send_message, QueueUrl=standard, MessageBody="b", MessageDeduplicationId="d") == ("InvalidParameterValue", 400)
    assert code(client.create_queue, QueueName="x" + name) == ("InvalidParameterValue", 400)
    assert code(client.create_queue, QueueName="plain", Attributes={"FifoQueue": "true"}) == ("InvalidParameterValue", 400)
    assert code(client.create_queue, QueueName="plain", Attributes={"ContentBasedDeduplication": "true"}) == ("InvalidAttributeName", 400)
    assert code(client.set_queue_attributes, QueueUrl=url, Attributes={"FifoQueue": "false"}) == ("InvalidAttributeValue", 400)
    redrive = json.dumps({"deadLetterTargetArn": arn_of(standard.rsplit("/", 1)[1]), "maxReceiveCount": 3})
    assert code(client.set_queue_attributes, QueueUrl=url, Attributes={"RedrivePolicy": redrive}) == ("InvalidParameterValue", 400)
    assert client.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"])["Attributes"] == {"ApproximateNumberOfMessages": "0"}


def test_dead_letters_keep_group_order(client, name):
    dlq = create_fifo(client, "d" + name)
    redrive = json.dumps({"deadLetterTargetArn": arn_of("d" + name), "maxReceiveCount": 1})
    url = create_fifo(client, name, RedrivePolicy=redrive)
    sent = {body: send(client, url, body, group)["MessageId"] for body, group in [("g1", "g"), ("h1", "h"), ("g2", "g"), ("g3", "g")]}
    assert len(receive(client, url, VisibilityTimeout=0)) == 4
    # Received as often as the policy allows: the next receive moves them instead of delivering them.
    assert receive(client, url) == []
    deadline = time.monotonic() + 10
    while client.get_queue_attributes(QueueUrl=dlq, AttributeNames=["ApproximateNumberOfMessages"])["Attributes"]["ApproximateNumberOfMessages"] != "4":
        assert time.monotonic() < deadline, "the dead-letter moves never happened"
        time.sleep(0.02)
    dead = receive(client, dlq)
    groups = {}
    for message in dead:
        groups.setdefault(message["Attributes"]["MessageGroupId"], []).append(message["Body"])
        assert message["MessageId"] == sent[message["Body"]]
        assert message["Attributes"]["MessageDeduplicationId"] == message["MessageId"]
        assert message["Attributes"]["DeadLetterQueueSourceArn"] == arn_of(name)
    assert groups == {"g": ["g1", "g2", "g3"], "h": ["h1"]}
