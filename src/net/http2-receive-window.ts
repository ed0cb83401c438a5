/**
 * The HTTP/2 receive window the broker grants each stream and each
 * connection, and its own client asks for, instead of HTTP/2's 64 KiB. At
 * 64 KiB a 1 MiB SendBatch, or a Receive answer of ten 100 KiB messages,
 * crosses the connection in sixteen round trips of WINDOW_UPDATE; scenario 10
 * of the benchmark (docs/performance.md) measured 100 KiB messages 1.2 times
 * faster with the client's window raised and 1.4 times with both. grpc-js
 * reads every stream as it arrives, so a larger window lets no more pile up
 * in memory: requests stay bounded by grpc.max_receive_message_length.
 */
export const receiveWindowBytes = 4 * 1024 * 1024;
