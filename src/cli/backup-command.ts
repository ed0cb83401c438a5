import { randomBytes } from "node:crypto";
import { link, lstat, open, unlink, type FileHandle } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { create } from "@bufbuild/protobuf";
import { Client, credentials, Metadata, type ClientReadableStream, type ServiceError } from "@grpc/grpc-js";
import { AdminService, BackupRequestSchema, type BackupResponse } from "../../gen/holdshelf/v1/admin_service_pb.js";
import { bearerTokenInterceptor } from "../client/bearer-token.js";
import { loadClientCredentials } from "../client/load-client-credentials.js";
import { RpcError } from "../client/rpc-error.js";
import { isLoopbackAddress } from "../net/loopback-address.js";
import { createServiceDefinition } from "../protocol/service-definition.js";
import { verifyBackup } from "../store/backup-format.js";
import { syncDirectory } from "../store/sync-directory.js";
import { connectionOptionTable } from "./client-options.js";
import { CommandError } from "./command-error.js";
import { parserOptions } from "./option-table.js";
import { UsageError } from "./usage-error.js";

const backup = createServiceDefinition(AdminService)["backup"]!;

/**
 * `holdshelf backup DEST`: asks a running embedded broker for a backup
 * (AdminService.Backup) and writes it to the file DEST, which must not exist.
 * The stream is read through the backup format's reader as it is written, so
 * a backup that is cut short or corrupt is never left as DEST; the file is
 * written under a temporary name beside DEST, synced, and linked into place
 * only if nothing took the name meanwhile.
 */
export async function backupCommand(
  args: string[],
  env: NodeJS.ProcessEnv,
  print: (line: string) => void,
): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: parserOptions(connectionOptionTable, env),
  });
  const [destination, ...extra] = positionals;
  if (destination === undefined) throw new UsageError("missing DEST, the backup file to write");
  if (extra.length > 0) throw new UsageError(`backup takes one DEST, not ${positionals.length}`);
  const dest = resolve(destination);
  if (await exists(dest)) throw new CommandError(`${dest} exists: a backup never overwrites a file`);
  const tlsCredentials = await loadClientCredentials({
    caFile: values["tls-ca"],
    certFile: values["tls-cert"],
    keyFile: values["tls-key"],
  });
  const channelCredentials = tlsCredentials ?? credentials.createInsecure();
  const token = values.token || undefined;
  if (token !== undefined && !channelCredentials._isSecure() && !isLoopbackAddress(values.address)) {
    throw new CommandError(
      `refusing to send a bearer token in plaintext to ${values.address}, which is not a loopback address: connect over TLS (--tls-ca)`,
    );
  }
  const client = new Client(values.address, channelCredentials, {
    ...(token === undefined ? {} : { interceptors: [bearerTokenInterceptor(token)] }),
  });
  const scratch = join(dirname(dest), `.${basename(dest)}.partial-${randomBytes(6).toString("hex")}`);
  // Owner-only: the file holds every message and the key that signs receipt handles.
  const file = await open(scratch, "wx", 0o600);
  try {
    const call = client.makeServerStreamRequest(
      backup.path,
      backup.requestSerialize,
      backup.responseDeserialize,
      create(BackupRequestSchema),
      new Metadata(),
    ) as ClientReadableStream<BackupResponse>;
    let bytes = 0;
    const summary = await verifyBackup(
      writeThrough(call, file, (length) => {
        bytes += length;
      }),
    );
    await file.sync();
    await file.close();
    // link, not rename: it fails rather than replace a DEST that appeared meanwhile.
    await link(scratch, dest).catch((error: NodeJS.ErrnoException) => {
      if (error.code === "EEXIST") throw new CommandError(`${dest} exists: a backup never overwrites a file`);
      throw error;
    });
    await unlink(scratch);
    await syncDirectory(dirname(dest));
    print(
      JSON.stringify({
        backup: dest,
        bytes,
        records: summary.records,
        snapshotTime: new Date(summary.snapshotTime).toISOString(),
      }),
    );
    return 0;
  } catch (error) {
    await file.close().catch(() => undefined);
    await unlink(scratch).catch(() => undefined);
    throw error;
  } finally {
    client.close();
  }
}

/** The stream's bytes, each written to `file` before it is passed on; a failed call as RpcError. */
async function* writeThrough(
  call: ClientReadableStream<BackupResponse>,
  file: FileHandle,
  written: (bytes: number) => void,
): AsyncGenerator<Uint8Array> {
  try {
    for await (const response of call) {
      const { data } = response as BackupResponse;
      await file.write(data);
      written(data.length);
      yield data;
    }
  } catch (error) {
    if (isServiceError(error)) throw RpcError.fromServiceError(error);
    throw error;
  } finally {
    // A reader that stopped early (a corrupt stream) leaves the call running.
    call.cancel();
  }
}

function isServiceError(error: unknown): error is ServiceError {
  return error instanceof Error && typeof (error as Partial<ServiceError>).code === "number" && "metadata" in error;
}

async function exists(path: string): Promise<boolean> {
  return lstat(path).then(
    () => true,
    (error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") return false;
      throw error;
    },
  );
}
