// How to run a binary built for a target on this machine: directly when the arch matches, else through qemu
// user-mode emulation with the Debian cross sysroot as the loader prefix (.ci/install-sea-deps.sh installs both).
// binfmt_misc may not be registered (it is not on the CI VM), so the emulator is always named explicitly.
import { accessSync, constants, existsSync } from 'node:fs'
import { delimiter, join } from 'node:path'

const EMULATION = {
  arm64: { qemu: 'qemu-aarch64-static', sysroot: '/usr/aarch64-linux-gnu', strip: 'aarch64-linux-gnu-strip' },
  arm: { qemu: 'qemu-arm-static', sysroot: '/usr/arm-linux-gnueabihf', strip: 'arm-linux-gnueabihf-strip' },
  x64: { qemu: 'qemu-x86_64-static', sysroot: '/', strip: 'strip' },
}

export function hostArch() {
  return process.arch
}

/** `[command, ...prefixArgs]` that runs an executable of `arch` here. */
export function runnerFor(arch) {
  if (arch === hostArch()) return []
  const e = EMULATION[arch]
  if (!e) throw new Error(`no emulator known for arch ${arch}`)
  return [e.qemu, '-L', e.sysroot]
}

/** The `strip` that understands `arch`'s ELF files. */
export function stripFor(arch) {
  const e = EMULATION[arch]
  if (!e) throw new Error(`no strip known for arch ${arch}`)
  return arch === hostArch() ? 'strip' : e.strip
}

/** What is missing on this machine to build or run `arch` executables, as a list of problems (empty when ready). */
export function missingTools(arch, which = commandExists) {
  const problems = []
  const e = EMULATION[arch]
  if (arch !== hostArch()) {
    if (!which(e.qemu)) problems.push(`${e.qemu} not found`)
    if (!existsSync(e.sysroot)) problems.push(`cross sysroot ${e.sysroot} not found`)
  }
  if (!which(stripFor(arch))) problems.push(`${stripFor(arch)} not found`)
  return problems
}

export function commandExists(name) {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    try {
      accessSync(join(dir, name), constants.X_OK)
      return true
    } catch {
      // keep looking
    }
  }
  return false
}
