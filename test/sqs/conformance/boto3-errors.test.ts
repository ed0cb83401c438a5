/**
 * AWS's recorded error answers (aws-errors.json) through boto3: runs
 * test_aws_errors.py with pytest against a real broker, on the query protocol
 * and, where a current boto3 is installed, the JSON protocol, failing with
 * pytest's report if any case fails.
 */
import { fileURLToPath } from "node:url";
import { describePytestFile } from "../describe-pytest-file.js";

describePytestFile(
  "AWS's recorded errors through boto3",
  fileURLToPath(new URL("./test_aws_errors.py", import.meta.url)),
  "answers as AWS did",
);
