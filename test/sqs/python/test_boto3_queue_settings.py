"""Queue policies and encryption attributes through boto3, unchanged: Debian's 1.26 (query) or a current one (JSON).

Run by test/sqs/boto3-queue-settings.test.ts, which starts a broker and
passes its endpoint in HOLDSHELF_SQS_ENDPOINT and the protocol the
interpreter's boto3 must speak in HOLDSHELF_SQS_PROTOCOL. The expected
statements, values and error texts are AWS's, as LocalStack recorded them.
"""
import json
import os
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
    sqs = boto3.client(
        "sqs",
        endpoint_url=ENDPOINT,
        region_name="us-east-1",
        aws_access_key_id="test",
        aws_secret_access_key="test",
        config=Config(retries={"total_max_attempts": 1}),
    )
    assert sqs.meta.service_model.protocol == PROTOCOL
    return sqs


@pytest.fixture
def queue(client):
    """A new queue's URL and ARN: the whole module shares one broker."""
    name = "s" + uuid.uuid4().hex[:12]
    return client.create_queue(QueueName=name)["QueueUrl"], f"arn:aws:sqs:us-east-1:{ACCOUNT}:{name}"


def error_of(call, **kwargs):
    """The code, HTTP status and message of the ClientError a call raises."""
    with pytest.raises(ClientError) as raised:
        call(**kwargs)
    response = raised.value.response
    return response["Error"]["Code"], response["ResponseMetadata"]["HTTPStatusCode"], response["Error"]["Message"]


def attributes(client, url, *names):
    return client.get_queue_attributes(QueueUrl=url, AttributeNames=list(names)).get("Attributes", {})


def test_policy_round_trip_and_removal(client, queue):
    url, arn = queue
    policy = json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sqs:*", "Resource": arn}]})
    client.set_queue_attributes(QueueUrl=url, Attributes={"Policy": policy})
    assert attributes(client, url, "Policy") == {"Policy": policy}
    assert attributes(client, url, "All")["Policy"] == policy
    client.set_queue_attributes(QueueUrl=url, Attributes={"Policy": ""})
    assert attributes(client, url, "Policy") == {}
    code, status, message = error_of(client.set_queue_attributes, QueueUrl=url, Attributes={"Policy": "{not json"})
    assert (code, status, message) == ("InvalidAttributeValue", 400, "Invalid value for the parameter Policy.")


def test_permission_lifecycle(client, queue):
    url, arn = queue
    client.add_permission(
        QueueUrl=url, Label="crossaccountpermission", AWSAccountIds=["668614515564", ACCOUNT], Actions=["ReceiveMessage"]
    )
    assert json.loads(attributes(client, url, "Policy")["Policy"]) == {
        "Version": "2008-10-17",
        "Id": f"{arn}/SQSDefaultPolicy",
        "Statement": [
            {
                "Sid": "crossaccountpermission",
                "Effect": "Allow",
                "Principal": {"AWS": ["arn:aws:iam::668614515564:root", f"arn:aws:iam::{ACCOUNT}:root"]},
                "Action": "SQS:ReceiveMessage",
                "Resource": arn,
            }
        ],
    }
    assert error_of(
        client.add_permission, QueueUrl=url, Label="crossaccountpermission", AWSAccountIds=[ACCOUNT], Actions=["SendMessage"]
    ) == (
        "InvalidParameterValue",
        400,
        "Value crossaccountpermission for parameter Label is invalid. Reason: Already exists.",
    )
    client.remove_permission(QueueUrl=url, Label="crossaccountpermission")
    assert attributes(client, url, "Policy") == {}
    assert error_of(client.remove_permission, QueueUrl=url, Label="crossaccountpermission") == (
        "InvalidParameterValue",
        400,
        "Value crossaccountpermission for parameter Label is invalid. Reason: can't find label.",
    )


def test_encryption_attributes(client, queue):
    url, _ = queue
    names = ("KmsMasterKeyId", "KmsDataKeyReusePeriodSeconds", "SqsManagedSseEnabled")
    assert attributes(client, url, *names) == {"SqsManagedSseEnabled": "true"}
    client.set_queue_attributes(
        QueueUrl=url,
        Attributes={"KmsMasterKeyId": "testKeyId", "KmsDataKeyReusePeriodSeconds": "6000", "SqsManagedSseEnabled": "false"},
    )
    assert attributes(client, url, *names) == {
        "KmsMasterKeyId": "testKeyId",
        "KmsDataKeyReusePeriodSeconds": "6000",
        "SqsManagedSseEnabled": "false",
    }
    code, status, message = error_of(
        client.set_queue_attributes, QueueUrl=url, Attributes={"KmsMasterKeyId": "k", "SqsManagedSseEnabled": "true"}
    )
    assert (code, status) == ("InvalidAttributeName", 400)
    assert message == "You can use one type of server-side encryption (SSE) at one time. You can either enable KMS SSE or SQS SSE."
    code, status, _ = error_of(client.set_queue_attributes, QueueUrl=url, Attributes={"KmsDataKeyReusePeriodSeconds": "59"})
    assert (code, status) == ("InvalidAttributeValue", 400)
