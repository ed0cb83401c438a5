"""A queue's tags, access policy and SQS encryption through holdshelf.Client, printing what it returned as JSON lines.

A fixture of test/clients/python-client.test.ts: one line per step,
{"check": NAME, ...fields}: a queue created with them and read back, then
updated without fields from what was read (which must keep them), with
fields and with tag_keys (which must change only what they name), a
refused encryption, and the tag_keys lists refused before any call. It
leaves the queue, for the test to compare with what the broker holds.
"""

from __future__ import annotations

import argparse
import dataclasses
import json

from holdshelf import Client, HoldshelfError, Queue, QueueConfig, SqsEncryption

POLICY = '{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":"sqs:SendMessage"}]}'


def emit(check: str, **fields: object) -> None:
    print(json.dumps({"check": check, **fields}), flush=True)


def config_of(queue: Queue) -> dict[str, object]:
    config = queue.config
    encryption = None if config.sqs_encryption is None else dataclasses.asdict(config.sqs_encryption)
    return {"visibility_timeout": config.visibility_timeout, "max_in_flight": config.max_in_flight,
            "tags": config.tags, "access_policy": config.access_policy, "sqs_encryption": encryption}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--address", required=True)
    args = parser.parse_args()
    name = "py-sqs-settings"
    with Client(args.address) as client:
        created = client.create_queue(name, QueueConfig(
            tags={"team": "billing", "env": "prod"}, access_policy=POLICY,
            sqs_encryption=SqsEncryption(kms_master_key_id="alias/orders", kms_data_key_reuse_period=600)))
        emit("created", **config_of(created))
        got = client.get_queue(name)
        emit("got", **config_of(got))

        # Read, change one field, write the whole configuration back.
        replaced = client.update_queue(name, dataclasses.replace(got.config, visibility_timeout=45))
        emit("replaced", **config_of(replaced))
        # Only max_in_flight: the empty tags and None policy and encryption here are not sent.
        masked = client.update_queue(name, QueueConfig(max_in_flight=42), fields=["max_in_flight"])
        emit("fields", **config_of(masked))
        # Only the encryption; then two tags: "env" removed, "owner" added, "team" kept.
        encrypted = client.update_queue(name, QueueConfig(sqs_encryption=SqsEncryption(sqs_managed_sse_enabled=True)),
                                        fields=["sqs_encryption"])
        emit("encryption", **config_of(encrypted))
        tagged = client.update_queue(name, QueueConfig(tags={"owner": "ana"}), tag_keys=["env", "owner"])
        emit("tag_keys", **config_of(tagged))

        try:
            client.update_queue(name, QueueConfig(sqs_encryption=SqsEncryption("alias/x", sqs_managed_sse_enabled=True)),
                                fields=["sqs_encryption"])
            raise AssertionError("a KMS key beside SQS-managed encryption was taken")
        except HoldshelfError as error:
            emit("both_encryptions", code=error.code.name, fields=[v.field for v in error.field_violations])

        refusals = []
        for fields, tag_keys in ((None, []), (None, "env"), (["tags"], ["env"])):
            try:
                client.update_queue(name, QueueConfig(), fields=fields, tag_keys=tag_keys)
                raise AssertionError(f"fields={fields!r} tag_keys={tag_keys!r} was taken")
            except ValueError as error:
                refusals.append(str(error))
        emit("refusals", messages=refusals)


if __name__ == "__main__":
    main()
