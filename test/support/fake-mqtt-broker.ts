/**
 * A scripted MQTT 3.1.1 broker for tests that need what a real one does only by accident: a message sent again
 * with DUP after a lost PUBACK, a packet id reused. It speaks just enough of the protocol (CONNECT → CONNACK with
 * the session-present flag the test sets, SUBSCRIBE → SUBACK, PINGREQ → PINGRESP) and lets the test send PUBLISH
 * packets and wait for their PUBACKs. Packets are framed by hand: a fixed header, a variable-length remaining length.
 */

import { createServer, type AddressInfo, type Socket } from 'node:net'

export interface FakeBroker {
  url: string
  /** Connections so far; the next CONNACK says session-present when `sessionPresent` is true. */
  connections(): number
  sessionPresent: boolean
  publish(packetId: number, topic: string, payload: string, options?: { dup?: boolean }): void
  /** Resolves once the client acknowledged `packetId` on the current connection. */
  acked(packetId: number): Promise<void>
  close(): Promise<void>
}

export async function startFakeBroker(): Promise<FakeBroker> {
  let socket: Socket | undefined
  let count = 0
  const acks = new Set<number>()
  const waiters = new Set<() => void>()
  const notify = () => {
    for (const w of [...waiters]) w()
  }
  const waitUntil = (ready: () => boolean) =>
    new Promise<void>((done) => {
      const check = () => {
        if (ready()) {
          waiters.delete(check)
          done()
        }
      }
      waiters.add(check)
      check()
    })
  const broker: FakeBroker = {
    url: '',
    connections: () => count,
    sessionPresent: false,
    publish(packetId, topic, payload, { dup = false } = {}) {
      const t = Buffer.from(topic)
      const body = Buffer.concat([u16(t.length), t, u16(packetId), Buffer.from(payload)])
      socket?.write(frame(0x32 | (dup ? 0x08 : 0), body))
    },
    acked: (packetId) => waitUntil(() => acks.has(packetId)),
    close: () =>
      new Promise((done) => {
        socket?.destroy()
        server.close(() => done())
      }),
  }
  const server = createServer((s) => {
    socket?.destroy()
    socket = s
    acks.clear()
    let buffer = Buffer.alloc(0)
    s.on('error', () => {})
    s.on('data', (d) => {
      buffer = Buffer.concat([buffer, d])
      for (;;) {
        const packet = readPacket(buffer)
        if (!packet) break
        buffer = buffer.subarray(packet.size)
        const kind = packet.header >> 4
        if (kind === 1) {
          count++
          s.write(Buffer.from([0x20, 0x02, broker.sessionPresent ? 1 : 0, 0x00])) // CONNACK, accepted
        } else if (kind === 8) {
          // SUBSCRIBE: packet id, then (filter, qos) pairs; grant QoS 1 to each.
          const filters = countFilters(packet.body.subarray(2))
          s.write(frame(0x90, Buffer.concat([packet.body.subarray(0, 2), Buffer.alloc(filters, 1)])))
        } else if (kind === 4) {
          acks.add(packet.body.readUInt16BE(0))
        } else if (kind === 12) {
          s.write(Buffer.from([0xd0, 0x00]))
        }
        notify()
      }
    })
  })
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', () => done()))
  broker.url = `mqtt://127.0.0.1:${(server.address() as AddressInfo).port}`
  return broker
}

function u16(n: number): Buffer {
  const b = Buffer.alloc(2)
  b.writeUInt16BE(n)
  return b
}

function frame(header: number, body: Buffer): Buffer {
  const length: number[] = []
  let n = body.length
  do {
    let byte = n % 128
    n = Math.floor(n / 128)
    if (n > 0) byte |= 0x80
    length.push(byte)
  } while (n > 0)
  return Buffer.concat([Buffer.from([header, ...length]), body])
}

function readPacket(b: Buffer): { header: number; body: Buffer; size: number } | undefined {
  if (b.length < 2) return undefined
  let length = 0
  let i = 1
  for (let shift = 0; ; shift += 7, i++) {
    if (i >= b.length) return undefined
    length += (b[i]! & 0x7f) << shift
    if (!(b[i]! & 0x80)) break
  }
  const start = i + 1
  if (b.length < start + length) return undefined
  return { header: b[0]!, body: b.subarray(start, start + length), size: start + length }
}

function countFilters(b: Buffer): number {
  let n = 0
  for (let i = 0; i + 2 <= b.length; n++) i += 2 + b.readUInt16BE(i) + 1
  return n
}
