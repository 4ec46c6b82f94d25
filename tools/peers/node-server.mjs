// Starts the upstream Node reference server (it ships no CLI). Prints "listening on URL".
// Env: DS_PORT (0 = any), DS_LONGPOLL_MS (500), DS_DATA_DIR (set = durable LMDB store),
// DS_WEBHOOKS=1 (allow webhook subscriptions).
import { DurableStreamTestServer } from "@durable-streams/server"

const opts = {
  port: Number(process.env.DS_PORT ?? 0),
  host: "127.0.0.1",
  longPollTimeout: Number(process.env.DS_LONGPOLL_MS ?? 500),
  compression: process.env.DS_COMPRESSION === "1",
  webhooks: process.env.DS_WEBHOOKS === "1",
}
if (process.env.DS_DATA_DIR) opts.dataDir = process.env.DS_DATA_DIR
const server = new DurableStreamTestServer(opts)
const url = await server.start()
console.log(`listening on ${url}`)
const stop = async () => { try { await server.stop() } finally { process.exit(0) } }
process.on("SIGINT", stop)
process.on("SIGTERM", stop)
