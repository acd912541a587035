import { createReadStream, createWriteStream } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { Readable, Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createInflateRaw, crc32, inflateRawSync } from 'node:zlib';

// A small ZIP reader: enough for GTFS archives (stored and deflate entries), strict about
// structure so that a damaged download fails with a message instead of half a schedule.

const EOCD_SIGNATURE = 0x06054b50;
const ZIP64_LOCATOR_SIGNATURE = 0x07064b50;
const CENTRAL_SIGNATURE = 0x02014b50;
const LOCAL_SIGNATURE = 0x04034b50;
const EOCD_SIZE = 22;
const MAX_COMMENT = 0xffff;
const CENTRAL_HEADER_SIZE = 46;
const LOCAL_HEADER_SIZE = 30;
const FLAG_ENCRYPTED = 0x1;
const FLAG_UTF8 = 0x800;

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

async function readAt(file: FileHandle, position: number, length: number): Promise<Buffer> {
  const buf = Buffer.alloc(length);
  const { bytesRead } = await file.read(buf, 0, length, position);
  return bytesRead === length ? buf : buf.subarray(0, bytesRead);
}

async function readCentralDirectory(file: FileHandle, fileSize: number, path: string): Promise<ZipEntry[]> {
  if (fileSize < EOCD_SIZE) throw new ZipError(`${path} is not a ZIP archive: only ${fileSize} bytes`);
  const tailLength = Math.min(fileSize, EOCD_SIZE + MAX_COMMENT);
  const tailStart = fileSize - tailLength;
  const tail = await readAt(file, tailStart, tailLength);
  const eocdAt = findEndOfCentralDirectory(tail);
  if (eocdAt < 0) {
    throw new ZipError(`${path} is not a ZIP archive or is truncated: end of central directory record not found`);
  }
  if (eocdAt >= 20 && tail.readUInt32LE(eocdAt - 20) === ZIP64_LOCATOR_SIGNATURE) {
    throw new ZipError(`${path} is a ZIP64 archive, which is not supported; re-pack it as a regular ZIP (under 4 GB, under 65,535 files)`);
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
    throw new ZipError(`${path} is corrupt: central directory (offset ${cdOffset}, ${cdSize} bytes) runs past its end record`);
  }
  const cd = await readAt(file, cdOffset, cdSize);
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
    if (entry.isDirectory) throw new ZipError(`${entry.name} is a directory`);
    if (entry.encrypted) throw new ZipError(`${this.path}: entry ${entry.name} is encrypted, which is not supported`);
    if (entry.method !== ZIP_METHOD_STORED && entry.method !== ZIP_METHOD_DEFLATE) {
      throw new ZipError(`${this.path}: entry ${entry.name} uses compression method ${entry.method}; only stored (0) and deflate (8) are supported`);
    }
    const header = await readAt(this.file, entry.localHeaderOffset, LOCAL_HEADER_SIZE);
    if (header.length < LOCAL_HEADER_SIZE || header.readUInt32LE(0) !== LOCAL_SIGNATURE) {
      throw new ZipError(`${this.path} is corrupt: local header of ${entry.name} not found`);
    }
    const start = entry.localHeaderOffset + LOCAL_HEADER_SIZE + header.readUInt16LE(26) + header.readUInt16LE(28);
    if (start + entry.compressedSize > this.fileSize) {
      throw new ZipError(`${this.path} is corrupt or truncated: data of ${entry.name} runs past the end of the file`);
    }
    return start;
  }

  async read(entry: ZipEntry): Promise<Buffer> {
    const start = await this.dataOffset(entry);
    const raw = await readAt(this.file, start, entry.compressedSize);
    let data: Buffer;
    if (entry.method === ZIP_METHOD_STORED) {
      data = raw;
    } else {
      try {
        // the cap stops a forged size from turning a small entry into a memory bomb
        data = inflateRawSync(raw, { maxOutputLength: Math.max(entry.size, 1) });
      } catch (err) {
        throw new ZipError(`${this.path} is corrupt: ${entry.name} does not inflate (${(err as Error).message})`);
      }
    }
    checkIntegrity(this.path, entry, data.length, crc32(data));
    return data;
  }

  async extract(entry: ZipEntry, destPath: string): Promise<void> {
    const start = await this.dataOffset(entry);
    const check = new IntegrityCheck(this.path, entry);
    // a read stream cannot express an empty range (end is inclusive)
    const source = entry.compressedSize === 0
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

  constructor(private readonly path: string, private readonly entry: ZipEntry) {
    super();
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.entry.size) {
      done(new ZipError(`${this.path} is corrupt: ${this.entry.name} inflates past its declared ${this.entry.size} bytes`));
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
