import { createWriteStream } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { Readable, Transform, type TransformCallback, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { crc32 } from 'node:zlib';
import yauzl from 'yauzl';

// GTFS archives arrive from the internet: yauzl reads their structure (central directory,
// ZIP64, local headers, inflate with the declared sizes enforced). Around it we keep what yauzl
// leaves to its caller: the CRC-32 check, refusing archives whose entries would inflate to
// absurd sizes, and tolerating junk after the archive (Caltrain's ct.zip ends in an HTML page).

export const ZIP_METHOD_STORED = 0;
export const ZIP_METHOD_DEFLATE = 8;

/** An entry larger than this is not a schedule file: stop_times.txt of the largest feeds is ~2 GB. */
export const MAX_ENTRY_BYTES = 8 * 1024 ** 3;
/**
 * Deflate cannot exceed ~1032:1; anything near that is a crafted bomb rather than a CSV (real
 * GTFS files compress 5–30:1). Small entries are exempt: their absolute size is harmless.
 */
export const MAX_COMPRESSION_RATIO = 1_000;
const RATIO_EXEMPT_BYTES = 1024 ** 2;

const EOCD_SIGNATURE = 0x06054b50;
const EOCD_SIZE = 22;
const MAX_COMMENT = 0xffff;

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

const OPTIONS: yauzl.Options = {
  lazyEntries: true,
  autoClose: false,
  decodeStrings: true,
  validateEntrySizes: true,
  // backslashes become slashes (archives made on Windows) instead of failing the whole schedule
  strictFileNames: false,
};

/** Opens a ZIP file and reads its central directory. Throws ZipError for anything malformed. */
export async function openZip(path: string): Promise<ZipArchive> {
  const file = await open(path, 'r');
  try {
    const { size } = await file.stat();
    const tailStart = endRecordSearchStart(size, path);
    const tail = Buffer.alloc(size - tailStart);
    await file.read(tail, 0, tail.length, tailStart);
    const archiveEnd = tailStart + archiveEndIn(tail, path);
    const zip = await wrap(path, () =>
      yauzl.fromRandomAccessReaderPromise(new FileRangeReader(file), archiveEnd, OPTIONS),
    );
    return new Archive(path, zip, await listEntries(zip, path), () => file.close());
  } catch (err) {
    await file.close();
    throw err;
  }
}

/**
 * Every file of an archive already in memory (directories left out), checked like `read`.
 * For small archives such as generated fixtures; `label` names the archive in errors.
 */
export async function readZipBuffer(
  bytes: Buffer,
  label = 'ZIP archive',
): Promise<Array<{ name: string; data: Buffer }>> {
  const tailStart = endRecordSearchStart(bytes.length, label);
  const archiveEnd = tailStart + archiveEndIn(bytes.subarray(tailStart), label);
  const zip = await wrap(label, () => yauzl.fromBufferPromise(bytes.subarray(0, archiveEnd), OPTIONS));
  const archive = new Archive(label, zip, await listEntries(zip, label), async () => {});
  try {
    const files: Array<{ name: string; data: Buffer }> = [];
    for (const entry of archive.entries) {
      if (!entry.isDirectory) files.push({ name: entry.name, data: await archive.read(entry) });
    }
    return files;
  } finally {
    await archive.close();
  }
}

/** Where the end record can start at the earliest: it may be followed by a comment of up to 64 KiB. */
function endRecordSearchStart(archiveSize: number, path: string): number {
  if (archiveSize < EOCD_SIZE) throw new ZipError(`${path} is not a ZIP archive: only ${archiveSize} bytes`);
  return archiveSize - Math.min(archiveSize, EOCD_SIZE + MAX_COMMENT);
}

/**
 * Where the archive ends inside `tail`: after the last end record whose comment fits in what
 * follows it. yauzl wants the archive to end exactly there, so bytes after it are cut off.
 */
function archiveEndIn(tail: Buffer, path: string): number {
  for (let i = tail.length - EOCD_SIZE; i >= 0; i--) {
    if (tail.readUInt32LE(i) !== EOCD_SIGNATURE) continue;
    const end = i + EOCD_SIZE + tail.readUInt16LE(i + 20);
    if (end <= tail.length) return end;
  }
  throw new ZipError(`${path} is not a ZIP archive or is truncated: end of central directory record not found`);
}

async function wrap<T>(path: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof ZipError) throw err;
    throw new ZipError(`${path} is corrupt: ${(err as Error).message}`);
  }
}

function listEntries(zip: yauzl.ZipFile, path: string): Promise<Map<ZipEntry, yauzl.Entry>> {
  const entries = new Map<ZipEntry, yauzl.Entry>();
  return new Promise((resolve, reject) => {
    zip.on('entry', (raw: yauzl.Entry) => {
      const entry: ZipEntry = {
        name: raw.fileName,
        isDirectory: raw.fileName.endsWith('/'),
        method: raw.compressionMethod,
        encrypted: raw.isEncrypted(),
        compressedSize: raw.compressedSize,
        size: raw.uncompressedSize,
        crc32: raw.crc32,
      };
      entries.set(entry, raw);
      zip.readEntry();
    });
    zip.once('end', () => resolve(entries));
    zip.once('error', (err: Error) => reject(new ZipError(`${path} is corrupt: ${err.message}`)));
    zip.readEntry();
  });
}

/**
 * Positional reads on one open file: yauzl asks for byte ranges, often several at a time. The
 * streams read through the handle instead of owning a descriptor: yauzl destroys the streams it
 * is done with, and a file stream's destroy closes its descriptor whatever autoClose says.
 */
class FileRangeReader extends yauzl.RandomAccessReader {
  constructor(private readonly file: FileHandle) {
    super();
  }

  override _readStreamForRange(start: number, end: number): Readable {
    const file = this.file;
    let position = start;
    return new Readable({
      highWaterMark: 64 * 1024,
      read(size) {
        const length = Math.min(size, end - position);
        if (length <= 0) {
          this.push(null);
          return;
        }
        file.read(Buffer.allocUnsafe(length), 0, length, position).then(
          ({ bytesRead, buffer }) => {
            if (bytesRead === 0) {
              this.destroy(new Error(`unexpected end of file at byte ${position}`));
              return;
            }
            position += bytesRead;
            this.push(buffer.subarray(0, bytesRead));
          },
          (err: Error) => this.destroy(err),
        );
      },
    });
  }
}

class Archive implements ZipArchive {
  readonly entries: readonly ZipEntry[];

  constructor(
    readonly path: string,
    private readonly zip: yauzl.ZipFile,
    private readonly raw: Map<ZipEntry, yauzl.Entry>,
    private readonly release: () => Promise<void>,
  ) {
    this.entries = [...raw.keys()];
  }

  private async open(entry: ZipEntry): Promise<Readable> {
    const raw = this.raw.get(entry);
    if (!raw) throw new ZipError(`${entry.name} is not an entry of ${this.path}`);
    checkReadable(this.path, entry);
    return wrap(this.path, () => this.zip.openReadStreamPromise(raw));
  }

  async read(entry: ZipEntry): Promise<Buffer> {
    const chunks: Buffer[] = [];
    const collect = new Writable({
      write(chunk: Buffer, _enc, done) {
        chunks.push(chunk);
        done();
      },
    });
    await this.copy(entry, collect);
    return Buffer.concat(chunks);
  }

  async extract(entry: ZipEntry, destPath: string): Promise<void> {
    await this.copy(entry, createWriteStream(destPath));
  }

  private async copy(entry: ZipEntry, sink: Writable): Promise<void> {
    const source = await this.open(entry);
    try {
      await pipeline(source, new IntegrityCheck(this.path, entry), sink);
    } catch (err) {
      if (err instanceof ZipError) throw err;
      throw new ZipError(`${this.path} is corrupt: ${entry.name} does not extract (${(err as Error).message})`);
    }
  }

  async close(): Promise<void> {
    this.zip.close();
    await this.release();
  }
}

function checkReadable(path: string, entry: ZipEntry): void {
  if (entry.isDirectory) throw new ZipError(`${entry.name} is a directory`);
  if (entry.encrypted) throw new ZipError(`${path}: entry ${entry.name} is encrypted, which is not supported`);
  if (entry.method !== ZIP_METHOD_STORED && entry.method !== ZIP_METHOD_DEFLATE) {
    throw new ZipError(
      `${path}: entry ${entry.name} uses compression method ${entry.method}; only stored (0) and deflate ` +
        `(8) are supported`,
    );
  }
  if (entry.size > MAX_ENTRY_BYTES) {
    throw new ZipError(
      `${path}: entry ${entry.name} declares ${entry.size} bytes, over the ${MAX_ENTRY_BYTES} allowed`,
    );
  }
  if (entry.size > RATIO_EXEMPT_BYTES && entry.size > entry.compressedSize * MAX_COMPRESSION_RATIO) {
    throw new ZipError(
      `${path}: entry ${entry.name} would inflate ${entry.compressedSize} bytes to ${entry.size} ` +
        `(over ${MAX_COMPRESSION_RATIO}:1), which no schedule file does`,
    );
  }
}

/** Passes bytes through while counting them and computing their CRC-32, which yauzl does not check. */
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
    if (this.bytes !== this.entry.size) {
      done(
        new ZipError(
          `${this.path} is corrupt: ${this.entry.name} holds ${this.bytes} bytes, its header says ${this.entry.size}`,
        ),
      );
    } else if (this.crc !== this.entry.crc32) {
      done(new ZipError(`${this.path} is corrupt: CRC-32 mismatch in ${this.entry.name}`));
    } else {
      done();
    }
  }
}
