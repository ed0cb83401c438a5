"""Debian's boto3 1.26 / botocore 1.29, unchanged, against holdshelf's SQS endpoint.

Run by test/sqs/boto3-query.test.ts, which starts a broker and passes its
endpoint in HOLDSHELF_SQS_ENDPOINT. These clients speak SQS's query protocol
(form-encoded requests, XML answers); every action of their model is called
here, with the errors a boto3 user catches.
"""
import hashlib
import os
import struct
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
import xml.etree.ElementTree as ElementTree

import boto3
import botocore
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

ENDPOINT = os.environ["HOLDSHELF_SQS_ENDPOINT"]
ACCOUNT = os.environ.get("HOLDSHELF_SQS_ACCOUNT", "000000000000")
NAMESPACE = "{http://queue.amazonaws.com/doc/2012-11-05/}"


def make_client(**config):
    # One attempt: each test sees the endpoint's answer as it was given.
    return boto3.client(
        "sqs",
        endpoint_url=ENDPOINT,
        region_name="us-east-1",
        aws_access_key_id="test",
        aws_secret_access_key="test",
        config=Config(retries={"total_max_attempts": 1}, **config),
    )


@pytest.fixture(scope="module")
def sent():
    """Every request the module's client sends: (Content-Type, form body)."""
    return []


@pytest.fixture(scope="module")
def client(sent):
    sqs = make_client()

    def record(request, **kwargs):
        text = lambda value: value.decode("utf-8") if isinstance(value, bytes) else value  # noqa: E731
        sent.append((text(request.headers.get("Content-Type")), text(request.body)))

    sqs.meta.events.register("before-send.sqs", record)
    return sqs


@pytest.fixture(scope="module")
def raw_client():
    """A client that skips botocore's own parameter checks, to reach the endpoint's."""
    return make_client(parameter_validation=False)


@pytest.fixture
def name():
    """A queue name no other test uses: the whole module shares one broker."""
    return "t" + uuid.uuid4().hex[:12]


def url_of(queue):
    return f"{ENDPOINT}/{ACCOUNT}/{queue}"


def arn_of(queue):
    return f"arn:aws:sqs:us-east-1:{ACCOUNT}:{queue}"


def error_of(call, *args, **kwargs):
    """The ClientError a call raises: its code, HTTP status and message."""
    with pytest.raises(ClientError) as raised:
        call(*args, **kwargs)
    response = raised.value.response
    return response["Error"]["Code"], response["ResponseMetadata"]["HTTPStatusCode"], response["Error"].get("Message", "")


def md5_of_attributes(attributes):
    """SQS's MD5OfMessageAttributes, written from its published algorithm."""
    buffer = bytearray()

    def field(data):
        buffer.extend(struct.pack(">I", len(data)))
        buffer.extend(data)

    for attribute in sorted(attributes):
        value = attributes[attribute]
        field(attribute.encode("utf-8"))
        field(value["DataType"].encode("utf-8"))
        if value["DataType"].split(".", 1)[0] == "Binary":
            buffer.append(2)
            field(value["BinaryValue"])
        else:
            buffer.append(1)
            field(value["StringValue"].encode("utf-8"))
    return hashlib.md5(bytes(buffer)).hexdigest()


def md5_of_body(body):
    return hashlib.md5(body.encode("utf-8")).hexdigest()


def receive_all(client, url, **kwargs):
    return client.receive_message(QueueUrl=url, MaxNumberOfMessages=10, **kwargs).get("Messages", [])


# A body XML mangles unless escaped: quotes, markup, a lone CR (XML parsers turn it into LF), CRLF, beyond ASCII.
AWKWARD_BODY = 'quotes " and \' <tag attr="x">&amp; & ]]> lone CR\r here, CRLF\r\n, LF\n, tab\t, ünïcödé 中文, emoji 😀🎉 𝄞'

EVERY_TYPE = {
    "text": {"DataType": "String", "StringValue": 'a "quoted" <value> & more, ünï 🎉'},
    "count": {"DataType": "Number", "StringValue": "-12.5e3"},
    "blob": {"DataType": "Binary", "BinaryValue": bytes([0, 1, 2, 0x7F, 0x80, 0xFE, 0xFF, 0x3C, 0x26, 0x22])},
    "id": {"DataType": "Number.int", "StringValue": "42"},
    "zipped": {"DataType": "Binary.gz", "BinaryValue": bytes([0x1F, 0x8B, 0x08, 0x00])},
}


def test_boto3_speaks_the_query_protocol(client, sent, name):
    # If Debian moves to a botocore that speaks JSON 1.0 (>= 1.34.90), these tests no longer cover the query protocol.
    assert client.meta.service_model.protocol == "query", botocore.__version__
    del sent[:]
    client.create_queue(QueueName=name)
    content_type, body = sent[-1]
    assert content_type.startswith("application/x-www-form-urlencoded")
    form = urllib.parse.parse_qs(body)
    assert form["Action"] == ["CreateQueue"]
    assert form["Version"] == ["2012-11-05"]
    assert form["QueueName"] == [name]


def test_md5_of_attributes_matches_the_published_vector():
    assert md5_of_attributes({"attribName1": {"DataType": "String", "StringValue": "attribValue 1"}}) == "19e27d4e946b072f3f58da80d94fd778"


def test_create_queue_with_attributes_and_tags_and_again(client, name):
    url = client.create_queue(QueueName=name, Attributes={"VisibilityTimeout": "45", "DelaySeconds": "3"}, tags={"team": "billing", "cost centre": "a&b=c"})["QueueUrl"]
    assert url == url_of(name)
    # The same again, or with no attributes: the existing queue's URL.
    assert client.create_queue(QueueName=name, Attributes={"VisibilityTimeout": "45"})["QueueUrl"] == url
    assert client.create_queue(QueueName=name)["QueueUrl"] == url
    code, status, message = error_of(client.create_queue, QueueName=name, Attributes={"VisibilityTimeout": "46"})
    assert (code, status) == ("QueueAlreadyExists", 400)
    assert "VisibilityTimeout" in message
    attributes = client.get_queue_attributes(QueueUrl=url, AttributeNames=["VisibilityTimeout", "DelaySeconds"])["Attributes"]
    assert attributes == {"VisibilityTimeout": "45", "DelaySeconds": "3"}
    assert client.list_queue_tags(QueueUrl=url)["Tags"] == {"team": "billing", "cost centre": "a&b=c"}


def test_get_queue_url(client, name):
    client.create_queue(QueueName=name)
    assert client.get_queue_url(QueueName=name)["QueueUrl"] == url_of(name)
    assert error_of(client.get_queue_url, QueueName=name + "-absent")[:2] == ("AWS.SimpleQueueService.NonExistentQueue", 400)


def test_list_queues_by_prefix_and_pages(client, name):
    names = [f"{name}-{i}" for i in range(3)]
    for queue in names:
        client.create_queue(QueueName=queue)
    client.create_queue(QueueName="other" + name)
    listed = client.list_queues(QueueNamePrefix=name)
    assert listed["QueueUrls"] == [url_of(queue) for queue in names]
    assert "NextToken" not in listed
    first = client.list_queues(QueueNamePrefix=name, MaxResults=2)
    assert first["QueueUrls"] == [url_of(queue) for queue in names[:2]]
    second = client.list_queues(QueueNamePrefix=name, MaxResults=2, NextToken=first["NextToken"])
    assert second["QueueUrls"] == [url_of(names[2])]
    assert "NextToken" not in second
    assert "QueueUrls" not in client.list_queues(QueueNamePrefix=name + "-none")
    everything = client.list_queues()["QueueUrls"]
    assert set(everything) >= {url_of(queue) for queue in names}


def test_get_queue_attributes_all_named_and_counts(client, name):
    url = client.create_queue(QueueName=name)["QueueUrl"]
    client.send_message(QueueUrl=url, MessageBody="now")
    client.send_message(QueueUrl=url, MessageBody="later", DelaySeconds=60)
    client.send_message(QueueUrl=url, MessageBody="also now")
    assert len(client.receive_message(QueueUrl=url, MaxNumberOfMessages=1)["Messages"]) == 1
    attributes = client.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert {k: attributes[k] for k in ("ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible", "ApproximateNumberOfMessagesDelayed")} == {
        "ApproximateNumberOfMessages": "1",
        "ApproximateNumberOfMessagesNotVisible": "1",
        "ApproximateNumberOfMessagesDelayed": "1",
    }
    assert attributes["QueueArn"] == arn_of(name)
    assert attributes["VisibilityTimeout"] == "30"
    assert attributes["DelaySeconds"] == "0"
    assert attributes["MessageRetentionPeriod"] == "345600"
    assert attributes["MaximumMessageSize"] == "1048576"
    assert attributes["ReceiveMessageWaitTimeSeconds"] == "0"
    assert abs(int(attributes["CreatedTimestamp"]) - time.time()) < 60
    assert abs(int(attributes["LastModifiedTimestamp"]) - time.time()) < 60
    named = client.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn", "ApproximateNumberOfMessages"])["Attributes"]
    assert named == {"QueueArn": arn_of(name), "ApproximateNumberOfMessages": "1"}
    assert "Attributes" not in client.get_queue_attributes(QueueUrl=url)
    assert error_of(client.get_queue_attributes, QueueUrl=url, AttributeNames=["Bogus"])[:2] == ("InvalidAttributeName", 400)


def test_set_queue_attributes_with_a_redrive_policy(client, name):
    dlq = client.create_queue(QueueName=name + "-dlq")["QueueUrl"]
    url = client.create_queue(QueueName=name)["QueueUrl"]
    policy = '{"deadLetterTargetArn":"%s","maxReceiveCount":1}' % arn_of(name + "-dlq")
    client.set_queue_attributes(QueueUrl=url, Attributes={"VisibilityTimeout": "40", "RedrivePolicy": policy})
    attributes = client.get_queue_attributes(QueueUrl=url, AttributeNames=["VisibilityTimeout", "RedrivePolicy"])["Attributes"]
    assert attributes == {"VisibilityTimeout": "40", "RedrivePolicy": policy}
    assert client.list_dead_letter_source_queues(QueueUrl=dlq)["queueUrls"] == [url]
    # Received once (maxReceiveCount 1) and back at once: the next receive moves it to the DLQ.
    client.send_message(QueueUrl=url, MessageBody="poison")
    assert [m["Body"] for m in receive_all(client, url, VisibilityTimeout=0)] == ["poison"]
    assert receive_all(client, url) == []
    # The move is the broker's background work: a long poll waits for it, as an SQS consumer would.
    assert [m["Body"] for m in receive_all(client, dlq, WaitTimeSeconds=5)] == ["poison"]
    code, status, _ = error_of(client.set_queue_attributes, QueueUrl=url, Attributes={"VisibilityTimeout": "43201"})
    assert (code, status) == ("InvalidAttributeValue", 400)
    assert error_of(client.set_queue_attributes, QueueUrl=url, Attributes={"Bogus": "1"})[:2] == ("InvalidAttributeName", 400)


def test_tags(client, name):
    url = client.create_queue(QueueName=name, tags={"a": "1"})["QueueUrl"]
    client.tag_queue(QueueUrl=url, Tags={"b": "2", "a": "one"})
    assert client.list_queue_tags(QueueUrl=url)["Tags"] == {"a": "one", "b": "2"}
    client.untag_queue(QueueUrl=url, TagKeys=["a", "absent"])
    assert client.list_queue_tags(QueueUrl=url)["Tags"] == {"b": "2"}
    client.untag_queue(QueueUrl=url, TagKeys=["b"])
    assert "Tags" not in client.list_queue_tags(QueueUrl=url)


def test_send_and_receive_every_attribute_type_and_an_awkward_body(client, name):
    url = client.create_queue(QueueName=name)["QueueUrl"]
    sent = client.send_message(QueueUrl=url, MessageBody=AWKWARD_BODY, MessageAttributes=EVERY_TYPE)
    assert sent["MD5OfMessageBody"] == md5_of_body(AWKWARD_BODY)
    assert sent["MD5OfMessageAttributes"] == md5_of_attributes(EVERY_TYPE)
    before = int(time.time() * 1000)
    [message] = client.receive_message(QueueUrl=url, MessageAttributeNames=["All"], AttributeNames=["All"])["Messages"]
    assert message["MessageId"] == sent["MessageId"]
    assert message["Body"] == AWKWARD_BODY
    assert message["MD5OfBody"] == md5_of_body(AWKWARD_BODY)
    assert message["MessageAttributes"] == EVERY_TYPE
    assert message["MD5OfMessageAttributes"] == md5_of_attributes(EVERY_TYPE)
    assert set(message["Attributes"]) >= {"SenderId", "SentTimestamp", "ApproximateReceiveCount", "ApproximateFirstReceiveTimestamp"}
    assert message["Attributes"]["ApproximateReceiveCount"] == "1"
    assert abs(int(message["Attributes"]["SentTimestamp"]) - before) < 60_000
    # Without asking for attributes, none come back.
    client.change_message_visibility(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"], VisibilityTimeout=0)
    [again] = client.receive_message(QueueUrl=url)["Messages"]
    assert again["Body"] == AWKWARD_BODY
    assert "MessageAttributes" not in again and "Attributes" not in again
    # By name: only those, with the digest of those.
    client.change_message_visibility(QueueUrl=url, ReceiptHandle=again["ReceiptHandle"], VisibilityTimeout=0)
    [some] = client.receive_message(QueueUrl=url, MessageAttributeNames=["blob", "id"], AttributeNames=["ApproximateReceiveCount"])["Messages"]
    chosen = {k: EVERY_TYPE[k] for k in ("blob", "id")}
    assert some["MessageAttributes"] == chosen
    assert some["MD5OfMessageAttributes"] == md5_of_attributes(chosen)
    assert some["Attributes"] == {"ApproximateReceiveCount": "3"}


def test_attribute_name_wildcards_as_aws_reads_them(client, name):
    # AWS's recorded case (LocalStack's test_receive_message_message_attribute_names_filters, query protocol).
    url = client.create_queue(QueueName=name)["QueueUrl"]
    attributes = {
        "Help.Me": {"DataType": "String", "StringValue": "Me"},
        "Hello": {"DataType": "String", "StringValue": "There"},
        "General": {"DataType": "String", "StringValue": "Kenobi"},
    }
    client.send_message(QueueUrl=url, MessageBody="msg", MessageAttributes=attributes)

    def names_of(names):
        [message] = client.receive_message(QueueUrl=url, MessageAttributeNames=names, VisibilityTimeout=0)["Messages"]
        return message.get("MessageAttributes")

    assert names_of(["*"]) == attributes
    assert names_of([".*"]) == attributes
    assert names_of(["All"]) == attributes
    assert names_of(["Hel.*"]) == {"Help.Me": attributes["Help.Me"], "Hello": attributes["Hello"]}
    assert names_of(["Help.*"]) == {"Help.Me": attributes["Help.Me"]}
    assert names_of(["Foo", "Help"]) is None


def test_aws_trace_header_is_kept_and_returned_when_asked(client, name):
    # AWS's recorded digest of this header (LocalStack's test_system_attributes_have_no_effect_on_attr_md5).
    header = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"
    system = {"AWSTraceHeader": {"DataType": "String", "StringValue": header}}
    url = client.create_queue(QueueName=name)["QueueUrl"]
    sent = client.send_message(QueueUrl=url, MessageBody="traced", MessageSystemAttributes=system)
    assert sent["MD5OfMessageSystemAttributes"] == "5ae4d5d7636402d80f4eb6d213245a88"
    batch = client.send_message_batch(
        QueueUrl=url, Entries=[{"Id": "t", "MessageBody": "batched", "MessageSystemAttributes": system}]
    )
    assert batch["Successful"][0]["MD5OfMessageSystemAttributes"] == "5ae4d5d7636402d80f4eb6d213245a88"
    messages = receive_all(client, url, AttributeNames=["AWSTraceHeader"], VisibilityTimeout=0)
    assert sorted((m["Body"], m["Attributes"]) for m in messages) == [
        ("batched", {"AWSTraceHeader": header}),
        ("traced", {"AWSTraceHeader": header}),
    ]
    assert all(m["Attributes"]["AWSTraceHeader"] == header for m in receive_all(client, url, AttributeNames=["All"], VisibilityTimeout=0))
    assert all("Attributes" not in m for m in receive_all(client, url))
    with pytest.raises(ClientError) as refused:
        client.send_message(QueueUrl=url, MessageBody="b", MessageSystemAttributes={"AWSTraceHeader": {"DataType": "Number", "StringValue": "1"}})
    assert refused.value.response["Error"]["Code"] == "InvalidParameterValue"


def test_send_message_batch_with_a_partial_failure(client, name):
    url = client.create_queue(QueueName=name)["QueueUrl"]
    result = client.send_message_batch(
        QueueUrl=url,
        Entries=[
            {"Id": "ok-1", "MessageBody": AWKWARD_BODY, "MessageAttributes": {"n": {"DataType": "Number", "StringValue": "1"}}},
            {"Id": "bad_chars", "MessageBody": "bad \x01 char"},
            {"Id": "ok-2", "MessageBody": "two", "DelaySeconds": 0},
        ],
    )
    successful = {entry["Id"]: entry for entry in result["Successful"]}
    assert list(successful) == ["ok-1", "ok-2"]
    assert successful["ok-1"]["MD5OfMessageBody"] == md5_of_body(AWKWARD_BODY)
    assert successful["ok-1"]["MD5OfMessageAttributes"] == md5_of_attributes({"n": {"DataType": "Number", "StringValue": "1"}})
    assert successful["ok-2"]["MD5OfMessageBody"] == md5_of_body("two")
    assert [(entry["Id"], entry["Code"], entry["SenderFault"]) for entry in result["Failed"]] == [("bad_chars", "InvalidMessageContents", True)]
    messages = receive_all(client, url, MessageAttributeNames=["All"])
    assert sorted(m["Body"] for m in messages) == sorted([AWKWARD_BODY, "two"])
    assert {m["MessageId"] for m in messages} == {entry["MessageId"] for entry in successful.values()}


def test_delete_message_and_batch_with_a_bad_handle(client, name):
    url = client.create_queue(QueueName=name)["QueueUrl"]
    client.send_message_batch(QueueUrl=url, Entries=[{"Id": str(i), "MessageBody": f"m{i}"} for i in range(3)])
    messages = receive_all(client, url)
    assert len(messages) == 3
    client.delete_message(QueueUrl=url, ReceiptHandle=messages[0]["ReceiptHandle"])
    result = client.delete_message_batch(
        QueueUrl=url,
        Entries=[
            {"Id": "first", "ReceiptHandle": messages[1]["ReceiptHandle"]},
            {"Id": "forged", "ReceiptHandle": "forged-handle"},
            {"Id": "second", "ReceiptHandle": messages[2]["ReceiptHandle"]},
        ],
    )
    assert [entry["Id"] for entry in result["Successful"]] == ["first", "second"]
    assert [(entry["Id"], entry["Code"], entry["SenderFault"]) for entry in result["Failed"]] == [("forged", "ReceiptHandleIsInvalid", True)]
    counts = client.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"])["Attributes"]
    assert counts == {"ApproximateNumberOfMessages": "0", "ApproximateNumberOfMessagesNotVisible": "0"}
    code, status, message = error_of(client.delete_message, QueueUrl=url, ReceiptHandle="garbage")
    assert (code, status) == ("ReceiptHandleIsInvalid", 400)
    assert '"garbage" is not a valid receipt handle' in message


def test_change_message_visibility_and_batch(client, name):
    url = client.create_queue(QueueName=name)["QueueUrl"]
    client.send_message(QueueUrl=url, MessageBody="m")
    [leased] = receive_all(client, url)
    assert receive_all(client, url) == []
    client.change_message_visibility(QueueUrl=url, ReceiptHandle=leased["ReceiptHandle"], VisibilityTimeout=0)
    [again] = receive_all(client, url)
    assert again["MessageId"] == leased["MessageId"]
    assert error_of(client.change_message_visibility, QueueUrl=url, ReceiptHandle=again["ReceiptHandle"], VisibilityTimeout=43_201)[:2] == (
        "InvalidParameterValue",
        400,
    )
    assert error_of(client.change_message_visibility, QueueUrl=url, ReceiptHandle="junk", VisibilityTimeout=10)[:2] == ("ReceiptHandleIsInvalid", 400)

    client.send_message(QueueUrl=url, MessageBody="n")
    [other] = receive_all(client, url)
    result = client.change_message_visibility_batch(
        QueueUrl=url,
        Entries=[
            {"Id": "release", "ReceiptHandle": again["ReceiptHandle"], "VisibilityTimeout": 0},
            {"Id": "bad", "ReceiptHandle": "nope", "VisibilityTimeout": 5},
            {"Id": "keep", "ReceiptHandle": other["ReceiptHandle"], "VisibilityTimeout": 300},
        ],
    )
    assert [entry["Id"] for entry in result["Successful"]] == ["release", "keep"]
    assert [(entry["Id"], entry["Code"]) for entry in result["Failed"]] == [("bad", "ReceiptHandleIsInvalid")]
    assert [m["Body"] for m in receive_all(client, url)] == ["m"]


def test_purge_and_delete_queue(client, name):
    url = client.create_queue(QueueName=name)["QueueUrl"]
    client.send_message_batch(QueueUrl=url, Entries=[{"Id": str(i), "MessageBody": "x"} for i in range(4)])
    client.purge_queue(QueueUrl=url)
    assert client.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"])["Attributes"] == {"ApproximateNumberOfMessages": "0"}
    client.delete_queue(QueueUrl=url)
    assert error_of(client.get_queue_url, QueueName=name)[:2] == ("AWS.SimpleQueueService.NonExistentQueue", 400)
    assert error_of(client.delete_queue, QueueUrl=url)[:2] == ("AWS.SimpleQueueService.NonExistentQueue", 400)
    assert error_of(client.purge_queue, QueueUrl=url)[:2] == ("AWS.SimpleQueueService.NonExistentQueue", 400)


def test_errors(client, raw_client, name):
    url = client.create_queue(QueueName=name)["QueueUrl"]
    absent = url_of(name + "-absent")
    for call, kwargs in [
        (client.send_message, {"QueueUrl": absent, "MessageBody": "b"}),
        (client.receive_message, {"QueueUrl": absent}),
        (client.get_queue_attributes, {"QueueUrl": absent, "AttributeNames": ["All"]}),
        (client.list_queue_tags, {"QueueUrl": absent}),
    ]:
        assert error_of(call, **kwargs)[:2] == ("AWS.SimpleQueueService.NonExistentQueue", 400), call
    assert error_of(client.create_queue, QueueName="has space")[:2] == ("InvalidParameterValue", 400)
    assert error_of(client.send_message, QueueUrl=url, MessageBody="b", DelaySeconds=901)[:2] == ("InvalidParameterValue", 400)
    assert error_of(client.receive_message, QueueUrl=url, MaxNumberOfMessages=11)[:2] == ("InvalidParameterValue", 400)
    assert error_of(client.send_message, QueueUrl=url, MessageBody="bad \x01 char")[:2] == ("InvalidMessageContents", 400)
    bad_number = {"n": {"DataType": "Number", "StringValue": "twelve"}}
    assert error_of(client.send_message, QueueUrl=url, MessageBody="b", MessageAttributes=bad_number)[:2] == ("InvalidParameterValue", 400)
    # botocore checks required parameters itself; without that check the endpoint's answer shows.
    assert error_of(raw_client.send_message, QueueUrl=url)[:2] == ("MissingParameter", 400)
    assert error_of(raw_client.create_queue)[:2] == ("MissingParameter", 400)
    assert error_of(client.create_queue, QueueName=name + "-x", Attributes={"Bogus": "1"})[:2] == ("InvalidAttributeName", 400)
    assert error_of(client.receive_message, QueueUrl=url, AttributeNames=["Bogus"])[:2] == ("InvalidAttributeName", 400)

    entry = lambda i: {"Id": i, "MessageBody": "b"}  # noqa: E731
    batch = lambda entries: error_of(client.send_message_batch, QueueUrl=url, Entries=entries)[:2]  # noqa: E731
    assert batch([entry(f"e{i}") for i in range(11)]) == ("AWS.SimpleQueueService.TooManyEntriesInBatchRequest", 400)
    assert batch([entry("a"), entry("a")]) == ("AWS.SimpleQueueService.BatchEntryIdsNotDistinct", 400)
    assert batch([]) == ("AWS.SimpleQueueService.EmptyBatchRequest", 400)
    assert batch([entry("no spaces")]) == ("AWS.SimpleQueueService.InvalidBatchEntryId", 400)
    assert error_of(client.delete_message_batch, QueueUrl=url, Entries=[])[:2] == ("AWS.SimpleQueueService.EmptyBatchRequest", 400)
    handles = [{"Id": f"e{i}", "ReceiptHandle": "h"} for i in range(11)]
    assert error_of(client.delete_message_batch, QueueUrl=url, Entries=handles)[:2] == ("AWS.SimpleQueueService.TooManyEntriesInBatchRequest", 400)
    assert error_of(client.delete_message, QueueUrl=url, ReceiptHandle="not-a-handle")[:2] == ("ReceiptHandleIsInvalid", 400)
    assert client.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"])["Attributes"] == {"ApproximateNumberOfMessages": "0"}


def test_an_unknown_action_is_an_xml_error_response():
    # botocore sends only its model's actions: this is the form it would post, by hand.
    form = urllib.parse.urlencode({"Action": "NoSuchAction", "Version": "2012-11-05"}).encode("ascii")
    request = urllib.request.Request(ENDPOINT + "/", data=form, headers={"Content-Type": "application/x-www-form-urlencoded; charset=utf-8"})
    with pytest.raises(urllib.error.HTTPError) as raised:
        urllib.request.urlopen(request, timeout=10)
    assert raised.value.code == 400
    root = ElementTree.fromstring(raw := raised.value.read())
    assert root.tag.endswith("ErrorResponse"), raw
    error = root.find(f"{NAMESPACE}Error") if root.find(f"{NAMESPACE}Error") is not None else root.find("Error")
    assert error is not None, raw
    fields = {child.tag.split("}")[-1]: child.text for child in error}
    assert fields["Code"] == "InvalidAction", raw
    assert fields["Type"] == "Sender", raw


def test_long_poll_waits_on_an_empty_queue(client, name):
    url = client.create_queue(QueueName=name)["QueueUrl"]
    started = time.monotonic()
    assert "Messages" not in client.receive_message(QueueUrl=url, WaitTimeSeconds=2)
    waited = time.monotonic() - started
    assert 1.5 <= waited < 10, waited


def test_long_poll_returns_a_message_sent_meanwhile(client, name):
    url = client.create_queue(QueueName=name)["QueueUrl"]
    # A client of its own: botocore clients are thread-safe, but this keeps the two calls independent.
    sender = make_client()
    thread = threading.Timer(0.5, lambda: sender.send_message(QueueUrl=url, MessageBody="meanwhile"))
    started = time.monotonic()
    thread.start()
    try:
        messages = client.receive_message(QueueUrl=url, WaitTimeSeconds=10).get("Messages", [])
    finally:
        thread.join()
    waited = time.monotonic() - started
    assert [m["Body"] for m in messages] == ["meanwhile"]
    assert 0.4 <= waited < 5, waited
