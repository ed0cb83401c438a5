/**
 * Queue policies and encryption attributes through boto3, unchanged: runs
 * test/sqs/python/test_boto3_queue_settings.py with pytest against a real
 * broker, on the query protocol and, where a current boto3 is installed, the
 * JSON protocol.
 */
import { fileURLToPath } from "node:url";
import { describePytestFile } from "./describe-pytest-file.js";

describePytestFile(
  "queue policies and encryption attributes through boto3",
  fileURLToPath(new URL("./python/test_boto3_queue_settings.py", import.meta.url)),
  "passes test_boto3_queue_settings.py",
);
