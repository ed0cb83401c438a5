import type { Scenario } from "../scenario.js";
import { appShaped } from "./app-shaped.js";
import { backupCost } from "./backup-cost.js";
import { batchedPipeline } from "./batched-pipeline.js";
import { churn } from "./churn.js";
import { clusterBrokers } from "./cluster-brokers.js";
import { consoleOverhead } from "./console-overhead.js";
import { deliveryLatency } from "./delivery-latency.js";
import { fifoQueues } from "./fifo-queues.js";
import { idleSubscribers } from "./idle-subscribers.js";
import { largeBodies } from "./large-bodies.js";
import { shardedBrokers } from "./sharded-brokers.js";
import { longPollLatency } from "./long-poll-latency.js";
import { natsPeer } from "./nats-peer.js";
import { postgresRefill } from "./postgres-refill.js";
import { postgresStore } from "./postgres-store.js";
import { rabbitMqPeer } from "./rabbitmq-peer.js";
import { redeliveryPrecision } from "./redelivery-precision.js";
import { restart } from "./restart.js";
import { singlePipeline } from "./single-pipeline.js";
import { sqsEndpoint } from "./sqs-endpoint.js";

/**
 * Every scenario of `npm run bench`, in the order they run: 7, 8 and 9 read
 * 1's rate; 10 writes the most; 11 (cluster storage on PostgreSQL) runs its
 * own LevelDB baseline; 12 (several brokers on one PostgreSQL) its own
 * one-broker baseline; 13 (the SQS endpoint against gRPC) its own gRPC
 * baseline, on brokers of its own; 14 (the admin console on against off)
 * its own console-off rows, on brokers of its own; 15 (FIFO queues against
 * a standard queue) its own standard rows, on brokers of its own; 16
 * (app-shaped) its RabbitMQ and JetStream rows, each server alone on the
 * machine; 17 (delivery latency) and 18 (idle subscribers) brokers of their
 * own; 19 (an online backup's cost) its own no-backup rows, on a broker of
 * its own; 20 (a drained PostgreSQL queue filled again) its PostgreSQL
 * server and broker of its own.
 */
export const scenarios: Scenario[] = [
  batchedPipeline,
  singlePipeline,
  longPollLatency,
  redeliveryPrecision,
  restart,
  churn,
  natsPeer,
  rabbitMqPeer,
  shardedBrokers,
  largeBodies,
  postgresStore,
  clusterBrokers,
  sqsEndpoint,
  consoleOverhead,
  fifoQueues,
  appShaped,
  deliveryLatency,
  idleSubscribers,
  backupCost,
  postgresRefill,
];
