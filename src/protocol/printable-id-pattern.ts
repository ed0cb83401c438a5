/**
 * An id of SQS's printable form: 1 to 128 characters of ASCII letters,
 * digits and punctuation, no spaces. MessageGroupId, MessageDeduplicationId
 * and ReceiveRequestAttemptId take it; the broker checks the first two on
 * both APIs, and the SQS endpoint checks all three first, to answer in AWS's
 * words.
 */
export const printableIdPattern = /^[\x21-\x7e]{1,128}$/;
