import { createReadStream, createWriteStream } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { Readable, Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createInflateRaw, crc32, inflateRawSync } from 'node:zlib';

// A small ZIP reader: enough for GTFS archives (stored and deflate entries), strict about
// structure so that a damaged download fails with a message instead of half a schedule.

// The record layout, shared with the writer (zip-write.ts).
export const EOCD_SIGNATURE = 0x06054b50;
const ZIP64_LOCATOR_SIGNATURE = 0x07064b50;
export const CENTRAL_SIGNATURE = 0x02014b50;
export const LOCAL_SIGNATURE = 0x04034b50;
export const EOCD_SIZE = 22;
const MAX_COMMENT = 0xffff;
export const CENTRAL_HEADER_SIZE = 46;
export const LOCAL_HEADER_SIZE = 30;
const FLAG_ENCRYPTED = 0x1;
export const FLAG_UTF8 = 0x800;

export const ZIP_METHOD_STORED = 0;
export const ZIP_METHOD_DEFLATE = 8;

export class ZipError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ZipError';
  }
}

export interface ZipEntry {
  /** path inside the archive, with forward slashes */
  readonly name: string;
  readonly isDirectory: boolean;
  readonly method: number;
  readonly encrypted: boolean;
  readonly compressedSize: number;
  readonly size: number;
  readonly crc32: number;
  readonly localHeaderOffset: number;
}

export interface ZipArchive {
  readonly path: string;
  readonly entries: readonly ZipEntry[];
  /** Whole entry in memory; for small entries. */
  read(entry: ZipEntry): Promise<Buffer>;
  /** Streams the entry to `destPath`, checking its size and CRC-32. */
  extract(entry: ZipEntry, destPath: string): Promise<void>;
  close(): Promise<void>;
}

/** Opens a ZIP file and reads its central directory. Throws ZipError for anything malformed. */
export async function openZip(path: string): Promise<ZipArchive> {
  const file = await open(path, 'r');
  try {
    const { size } = await file.stat();
    const entries = await readCentralDirectory(file, size, path);
    return new FileZipArchive(path, file, size, entries);
  } catch (err) {
    await file.close();
    throw err;
  }
}

/**
 * Every file of an archive already in memory (directories left out), checked like `read`.
 * Synchronous, for small archives such as generated fixtures; `label` names the archive in errors.
 */
export function readZipBuffer(bytes: Buffer, label = 'ZIP archive'): Array<{ name: string; data: Buffer }> {
  const tailStart = endRecordSearchStart(bytes.length, label);
  const directory = locateCentralDirectory(bytes.subarray(tailStart), tailStart, label);
  const cd = bytes.subarray(directory.offset, directory.offset + directory.size);
  return parseCentralDirectory(cd, directory, label)
    .filter((e) => !e.isDirectory)
    .map((entry) => {
      checkReadable(label, entry);
      const header = bytes.subarray(entry.localHeaderOffset, entry.localHeaderOffset + LOCAL_HEADER_SIZE);
      const start = dataStart(label, entry, header, bytes.length);
      return { name: entry.name, data: decodeEntry(label, entry, bytes.subarray(start, start + entry.compressedSize)) };
    });
}

async function readAt(file: FileHandle, position: number, length: number): Promise<Buffer> {
  const buf = Buffer.alloc(length);
  const { bytesRead } = await file.read(buf, 0, length, position);
  return bytesRead === length ? buf : buf.subarray(0, bytesRead);
}

async function readCentralDirectory(file: FileHandle, fileSize: number, path: string): Promise<ZipEntry[]> {
  const tailStart = endRecordSearchStart(fileSize, path);
  const tail = await readAt(file, tailStart, fileSize - tailStart);
  const directory = locateCentralDirectory(tail, tailStart, path);
  const cd = await readAt(file, directory.offset, directory.size);
  return parseCentralDirectory(cd, directory, path);
}

/** Where the end record can start at the earliest: it may be followed by a comment of up to 64 KiB. */
function endRecordSearchStart(archiveSize: number, path: string): number {
  if (archiveSize < EOCD_SIZE) throw new ZipError(`${path} is not a ZIP archive: only ${archiveSize} bytes`);
  return archiveSize - Math.min(archiveSize, EOCD_SIZE + MAX_COMMENT);
}

interface CentralDirectoryLocation {
  readonly entryCount: number;
  readonly offset: number;
  readonly size: number;
}

/** Reads the end record in the archive's last bytes (`tail`, starting at `tailStart`). */
function locateCentralDirectory(tail: Buffer, tailStart: number, path: string): CentralDirectoryLocation {
  const eocdAt = findEndOfCentralDirectory(tail);
  if (eocdAt < 0) {
    throw new ZipError(`${path} is not a ZIP archive or is truncated: end of central directory record not found`);
  }
  if (eocdAt >= 20 && tail.readUInt32LE(eocdAt - 20) === ZIP64_LOCATOR_SIGNATURE) {
    throw new ZipError(
      `${path} is a ZIP64 archive, which is not supported; re-pack it as a regular ZIP (under 4 GB, under 65,535 files)`,
    );
  }
  const disk = tail.readUInt16LE(eocdAt + 4);
  const cdDisk = tail.readUInt16LE(eocdAt + 6);
  const entriesOnDisk = tail.readUInt16LE(eocdAt + 8);
  const entryCount = tail.readUInt16LE(eocdAt + 10);
  const cdSize = tail.readUInt32LE(eocdAt + 12);
  const cdOffset = tail.readUInt32LE(eocdAt + 16);
  if (entryCount === 0xffff || cdSize === 0xffffffff || cdOffset === 0xffffffff) {
    throw new ZipError(`${path} is a ZIP64 archive, which is not supported; re-pack it as a regular ZIP`);
  }
  if (disk !== 0 || cdDisk !== 0 || entriesOnDisk !== entryCount) {
    throw new ZipError(`${path} is a multi-part (spanned) ZIP archive, which is not supported`);
  }
  const eocdOffset = tailStart + eocdAt;
  if (cdOffset + cdSize > eocdOffset) {
    throw new ZipError(
      `${path} is corrupt: central directory (offset ${cdOffset}, ${cdSize} bytes) runs past its end record`,
    );
  }
  return { entryCount, offset: cdOffset, size: cdSize };
}

function parseCentralDirectory(cd: Buffer, directory: CentralDirectoryLocation, path: string): ZipEntry[] {
  const { entryCount, offset: cdOffset } = directory;
  const entries: ZipEntry[] = [];
  let at = 0;
  for (let i = 0; i < entryCount; i++) {
    if (at + CENTRAL_HEADER_SIZE > cd.length || cd.readUInt32LE(at) !== CENTRAL_SIGNATURE) {
      throw new ZipError(`${path} is corrupt: central directory entry ${i + 1} of ${entryCount} is damaged`);
    }
    const flags = cd.readUInt16LE(at + 8);
    const method = cd.readUInt16LE(at + 10);
    const crc = cd.readUInt32LE(at + 16);
    const compressedSize = cd.readUInt32LE(at + 20);
    const size = cd.readUInt32LE(at + 24);
    const nameLength = cd.readUInt16LE(at + 28);
    const extraLength = cd.readUInt16LE(at + 30);
    const commentLength = cd.readUInt16LE(at + 32);
    const localHeaderOffset = cd.readUInt32LE(at + 42);
    const next = at + CENTRAL_HEADER_SIZE + nameLength + extraLength + commentLength;
    if (next > cd.length) throw new ZipError(`${path} is corrupt: central directory entry ${i + 1} is truncated`);
    const rawName = cd.subarray(at + CENTRAL_HEADER_SIZE, at + CENTRAL_HEADER_SIZE + nameLength);
    const name = rawName.toString(flags & FLAG_UTF8 ? 'utf8' : 'latin1').replaceAll('\\', '/');
    if (compressedSize === 0xffffffff || size === 0xffffffff || localHeaderOffset === 0xffffffff) {
      throw new ZipError(`${path} is a ZIP64 archive (entry ${name}), which is not supported`);
    }
    if (localHeaderOffset + LOCAL_HEADER_SIZE > cdOffset) {
      throw new ZipError(`${path} is corrupt: entry ${name} points outside the archive data`);
    }
    entries.push({
      name,
      isDirectory: name.endsWith('/'),
      method,
      encrypted: (flags & FLAG_ENCRYPTED) !== 0,
      compressedSize,
      size,
      crc32: crc,
      localHeaderOffset,
    });
    at = next;
  }
  return entries;
}

/**
 * The last EOCD signature whose comment fits in what follows it. Bytes after the comment are
 * tolerated: real feeds arrive with junk appended (Caltrain's ct.zip ends in an HTML page).
 */
function findEndOfCentralDirectory(tail: Buffer): number {
  for (let i = tail.length - EOCD_SIZE; i >= 0; i--) {
    if (tail.readUInt32LE(i) === EOCD_SIGNATURE && i + EOCD_SIZE + tail.readUInt16LE(i + 20) <= tail.length) {
      return i;
    }
  }
  return -1;
}

class FileZipArchive implements ZipArchive {
  constructor(
    readonly path: string,
    private readonly file: FileHandle,
    private readonly fileSize: number,
    readonly entries: readonly ZipEntry[],
  ) {}

  private async dataOffset(entry: ZipEntry): Promise<number> {
    checkReadable(this.path, entry);
    const header = await readAt(this.file, entry.localHeaderOffset, LOCAL_HEADER_SIZE);
    return dataStart(this.path, entry, header, this.fileSize);
  }

  async read(entry: ZipEntry): Promise<Buffer> {
    const start = await this.dataOffset(entry);
    return decodeEntry(this.path, entry, await readAt(this.file, start, entry.compressedSize));
  }

  async extract(entry: ZipEntry, destPath: string): Promise<void> {
    const start = await this.dataOffset(entry);
    const check = new IntegrityCheck(this.path, entry);
    // a read stream cannot express an empty range (end is inclusive)
    const source =
      entry.compressedSize === 0
        ? Readable.from([])
        : createReadStream(this.path, { start, end: start + entry.compressedSize - 1 });
    try {
      if (entry.method === ZIP_METHOD_DEFLATE) {
        await pipeline(source, createInflateRaw(), check, createWriteStream(destPath));
      } else {
        await pipeline(source, check, createWriteStream(destPath));
      }
    } catch (err) {
      if (err instanceof ZipError) throw err;
      throw new ZipError(`${this.path} is corrupt: ${entry.name} does not extract (${(err as Error).message})`);
    }
  }

  close(): Promise<void> {
    return this.file.close();
  }
}

function checkReadable(path: string, entry: ZipEntry): void {
  if (entry.isDirectory) throw new ZipError(`${entry.name} is a directory`);
  if (entry.encrypted) throw new ZipError(`${path}: entry ${entry.name} is encrypted, which is not supported`);
  if (entry.method !== ZIP_METHOD_STORED && entry.method !== ZIP_METHOD_DEFLATE) {
    throw new ZipError(
      `${path}: entry ${entry.name} uses compression method ${entry.method}; only stored (0) and deflate (8) are supported`,
    );
  }
}

/** Where the entry's data starts, after its local header (`header`, the header's fixed part). */
function dataStart(path: string, entry: ZipEntry, header: Buffer, archiveSize: number): number {
  if (header.length < LOCAL_HEADER_SIZE || header.readUInt32LE(0) !== LOCAL_SIGNATURE) {
    throw new ZipError(`${path} is corrupt: local header of ${entry.name} not found`);
  }
  const start = entry.localHeaderOffset + LOCAL_HEADER_SIZE + header.readUInt16LE(26) + header.readUInt16LE(28);
  if (start + entry.compressedSize > archiveSize) {
    throw new ZipError(`${path} is corrupt or truncated: data of ${entry.name} runs past the end of the file`);
  }
  return start;
}

/** The entry's bytes from its stored data (`raw`), with size and CRC-32 checked. */
function decodeEntry(path: string, entry: ZipEntry, raw: Buffer): Buffer {
  let data: Buffer;
  if (entry.method === ZIP_METHOD_STORED) {
    data = raw;
  } else {
    try {
      // the cap stops a forged size from turning a small entry into a memory bomb
      data = inflateRawSync(raw, { maxOutputLength: Math.max(entry.size, 1) });
    } catch (err) {
      throw new ZipError(`${path} is corrupt: ${entry.name} does not inflate (${(err as Error).message})`);
    }
  }
  checkIntegrity(path, entry, data.length, crc32(data));
  return data;
}

function checkIntegrity(path: string, entry: ZipEntry, size: number, crc: number): void {
  if (size !== entry.size) {
    throw new ZipError(`${path} is corrupt: ${entry.name} holds ${size} bytes, its header says ${entry.size}`);
  }
  if (crc !== entry.crc32) {
    throw new ZipError(`${path} is corrupt: CRC-32 mismatch in ${entry.name}`);
  }
}

/** Passes bytes through while counting them and computing their CRC-32. */
class IntegrityCheck extends Transform {
  private bytes = 0;
  private crc = 0;

  constructor(
    private readonly path: string,
    private readonly entry: ZipEntry,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.entry.size) {
      done(
        new ZipError(`${this.path} is corrupt: ${this.entry.name} inflates past its declared ${this.entry.size} bytes`),
      );
      return;
    }
    this.crc = crc32(chunk, this.crc);
    done(null, chunk);
  }

  override _flush(done: TransformCallback): void {
    try {
      checkIntegrity(this.path, this.entry, this.bytes, this.crc);
      done();
    } catch (err) {
      done(err as Error);
    }
  }
}
