import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { embeddedIpv4, formatIp, inCidr, parseCidr, parseIp } from '../../src/core/ip.ts'

const ip = (text: string): Uint8Array => {
  const bytes = parseIp(text)
  if (!bytes) throw new Error(`${text} did not parse`)
  return bytes
}

test('dotted quads and IPv6 in every canonical spelling parse to their bytes', () => {
  assert.equal([...ip('127.0.0.1')], [127, 0, 0, 1])
  assert.equal([...ip('::1')], [...new Array(15).fill(0), 1])
  assert.equal([...ip('[::ffff:7f00:1]')], [...new Array(10).fill(0), 0xff, 0xff, 127, 0, 0, 1])
  assert.equal([...ip('::ffff:127.0.0.1')], [...ip('::ffff:7f00:1')])
  assert.equal([...ip('fe80::1%eth0')], [...ip('fe80::1')])
  assert.equal([...ip('1:2:3:4:5:6:7:8')].slice(14), [0, 8])
  assert.equal([...ip('1::')].slice(0, 2), [0, 1])
})

test('what is not an address in canonical form is not one (names, odd IPv4 forms the URL parser would have rewritten)', () => {
  for (const text of [
    'localhost',
    '127.1',
    '0x7f.0.0.1',
    '0177.0.0.1',
    '2130706433',
    '256.0.0.1',
    '1.2.3.4.5',
    ':::',
    '1::2::3',
    '1:2:3:4:5:6:7:8:9',
    '::g',
    '',
  ])
    assert.is(parseIp(text), undefined, text)
})

test('CIDRs: an IPv4 address matches the IPv6 form of its range and the other way round; prefixes mask bits', () => {
  const lo = parseCidr('127.0.0.0/8')!
  assert.ok(inCidr(ip('127.255.0.9'), lo))
  assert.ok(inCidr(ip('::ffff:7f00:1'), lo), 'IPv4-mapped')
  assert.ok(inCidr(ip('::7f00:1'), lo), 'IPv4-compatible')
  assert.ok(inCidr(ip('64:ff9b::7f00:1'), lo), 'NAT64')
  assert.not.ok(inCidr(ip('128.0.0.1'), lo))
  assert.not.ok(inCidr(ip('::1'), lo))
  assert.ok(inCidr(ip('127.0.0.1'), parseCidr('::ffff:127.0.0.0/104')!))
  const p12 = parseCidr('172.16.0.0/12')!
  assert.ok(inCidr(ip('172.31.255.255'), p12))
  assert.not.ok(inCidr(ip('172.32.0.0'), p12))
  assert.ok(inCidr(ip('fe80::abcd'), parseCidr('fe80::/10')!))
  assert.not.ok(inCidr(ip('fec0::1'), parseCidr('fe80::/10')!))
  assert.ok(inCidr(ip('10.1.2.3'), parseCidr('0.0.0.0/0')!))
  for (const bad of ['10.0.0.0/33', '::/129', '10.0.0.0/', 'x/8', '10.0.0.0/8/8', '10.0.0.0/-1']) assert.is(parseCidr(bad), undefined, bad)
})

test('an IPv6 address stands for an IPv4 one only where it reaches it; :: and ::1 are IPv6 own', () => {
  assert.equal([...embeddedIpv4(ip('::ffff:a00:1'))!], [10, 0, 0, 1])
  assert.is(embeddedIpv4(ip('::')), undefined)
  assert.is(embeddedIpv4(ip('::1')), undefined)
  assert.is(embeddedIpv4(ip('2001:db8::1')), undefined)
  assert.is(embeddedIpv4(ip('1.2.3.4')), undefined)
})

test('addresses are written canonically, the longest zero run as ::', () => {
  assert.is(formatIp(ip('::ffff:127.0.0.1')), '::ffff:7f00:1')
  assert.is(formatIp(ip('0:0:0:0:0:0:0:0')), '::')
  assert.is(formatIp(ip('1:0:0:2:0:0:0:3')), '1:0:0:2::3')
  assert.is(formatIp(ip('1:2:3:4:5:6:7:8')), '1:2:3:4:5:6:7:8')
  assert.is(formatIp(ip('10.0.0.1')), '10.0.0.1')
})

test.run()
