// Who imports each export of the project's TypeScript files, by name: read from the source with
// the TypeScript parser (imports, re-exports through index files, `export *`, namespace imports
// and the names read off them). test/architecture.test.ts asks it which production exports only
// tests import.
import { existsSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import ts from 'typescript';

export interface ExportInfo {
  file: string;
  name: string;
  line: number;
  /** a type, an interface: erased at run time */
  typeOnly: boolean;
  /** the file uses the name itself, besides exporting it */
  usedInFile: boolean;
}

interface FileFacts {
  exports: ExportInfo[];
  /** `export { a as b } from './x'`: b → (x, a) */
  reexports: Map<string, { from: string; name: string }>;
  /** `export * from './x'` */
  star: string[];
  /** names imported from each resolved module; '*' when a namespace is used whole */
  imports: Array<{ from: string; names: string[] }>;
  /** names called as `.name(` inside string literals: code this file generates (a bundle's loader) */
  generated: Set<string>;
}

const SOURCE = /\.(ts|mts|cts)$/;

function resolve(root: string, file: string, spec: string): string | null {
  if (!spec.startsWith('.')) return null;
  const path = posix.normalize(posix.join(posix.dirname(file), spec));
  if (SOURCE.test(path)) return path;
  if (/\.[cm]?js$/.test(path) && existsSync(join(root, path.replace(/js$/, 'ts')))) return path.replace(/js$/, 'ts');
  if (existsSync(join(root, `${path}.ts`))) return `${path}.ts`;
  if (existsSync(join(root, path, 'index.ts'))) return posix.join(path, 'index.ts');
  return path;
}

const modifiers = (node: ts.Node) => (ts.canHaveModifiers(node) ? (ts.getModifiers(node) ?? []) : []);
const hasExport = (node: ts.Node) => modifiers(node).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);

function factsOf(root: string, file: string, text: string): FileFacts {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const facts: FileFacts = { exports: [], reexports: new Map(), star: [], imports: [], generated: new Set() };
  const lineOf = (node: ts.Node) => source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
  const declared: Array<{ name: string; node: ts.Node; typeOnly: boolean }> = [];
  const namespaces = new Map<string, string>();
  /** local name → the module and name it is imported as */
  const importedAs = new Map<string, { from: string; name: string }>();

  for (const stmt of source.statements) {
    if (ts.isImportDeclaration(stmt) && ts.isStringLiteral(stmt.moduleSpecifier)) {
      const from = resolve(root, file, stmt.moduleSpecifier.text);
      const clause = stmt.importClause;
      if (from === null || !clause) continue;
      const names: string[] = [];
      if (clause.name) names.push('default');
      const bindings = clause.namedBindings;
      if (bindings && ts.isNamedImports(bindings))
        for (const el of bindings.elements) {
          names.push((el.propertyName ?? el.name).text);
          importedAs.set(el.name.text, { from, name: (el.propertyName ?? el.name).text });
        }
      if (bindings && ts.isNamespaceImport(bindings)) namespaces.set(bindings.name.text, from);
      facts.imports.push({ from, names });
    } else if (ts.isExportDeclaration(stmt)) {
      const from =
        stmt.moduleSpecifier && ts.isStringLiteral(stmt.moduleSpecifier)
          ? resolve(root, file, stmt.moduleSpecifier.text)
          : undefined;
      if (from === null) continue;
      if (!stmt.exportClause) {
        if (from) facts.star.push(from);
        continue;
      }
      if (!ts.isNamedExports(stmt.exportClause)) continue;
      for (const el of stmt.exportClause.elements) {
        const local = (el.propertyName ?? el.name).text;
        // `export { a }` of an imported `a` passes that module's export on
        const passed = from ? { from, name: local } : importedAs.get(local);
        if (passed) facts.reexports.set(el.name.text, passed);
        else declared.push({ name: el.name.text, node: el, typeOnly: stmt.isTypeOnly || el.isTypeOnly });
      }
    } else if (hasExport(stmt)) {
      const isDefault = modifiers(stmt).some((m) => m.kind === ts.SyntaxKind.DefaultKeyword);
      const typeOnly = ts.isInterfaceDeclaration(stmt) || ts.isTypeAliasDeclaration(stmt);
      if (ts.isVariableStatement(stmt)) {
        for (const d of stmt.declarationList.declarations)
          if (ts.isIdentifier(d.name)) declared.push({ name: d.name.text, node: d, typeOnly: false });
      } else if (
        (ts.isFunctionDeclaration(stmt) ||
          ts.isClassDeclaration(stmt) ||
          ts.isInterfaceDeclaration(stmt) ||
          ts.isTypeAliasDeclaration(stmt) ||
          ts.isEnumDeclaration(stmt)) &&
        (stmt.name || isDefault)
      ) {
        declared.push({ name: isDefault ? 'default' : stmt.name!.text, node: stmt, typeOnly });
      }
    } else if (ts.isExportAssignment(stmt)) {
      declared.push({ name: 'default', node: stmt, typeOnly: false });
    }
  }

  // dynamic import('./x') and import('./x').Type: every export of x may be read
  const visit = (node: ts.Node): void => {
    if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      const from = resolve(root, file, node.arguments[0].text);
      if (from) facts.imports.push({ from, names: ['*'] });
    }
    if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      const from = resolve(root, file, node.argument.literal.text);
      if (from)
        facts.imports.push({
          from,
          names: node.qualifier && ts.isIdentifier(node.qualifier) ? [node.qualifier.text] : ['*'],
        });
    }
    // ns.name off a namespace import
    if (ts.isPropertyAccessExpression(node) && ts.isIdentifier(node.expression) && namespaces.has(node.expression.text))
      facts.imports.push({ from: namespaces.get(node.expression.text)!, names: [node.name.text] });
    if (ts.isQualifiedName(node) && ts.isIdentifier(node.left) && namespaces.has(node.left.text))
      facts.imports.push({ from: namespaces.get(node.left.text)!, names: [node.right.text] });
    if (ts.isStringLiteralLike(node) || ts.isTemplateHead(node) || ts.isTemplateMiddle(node) || ts.isTemplateTail(node))
      for (const m of node.text.matchAll(/\.([A-Za-z_$][\w$]*)\(/g)) facts.generated.add(m[1]!);
    ts.forEachChild(node, visit);
  };
  visit(source);
  // a namespace passed around whole (not only read by property) counts as using everything
  for (const [ns, from] of namespaces) {
    const bare = new RegExp(`\\b${ns}\\b(?!\\s*\\.)`, 'g');
    const uses = [...text.matchAll(bare)].length;
    if (uses > 1) facts.imports.push({ from, names: ['*'] });
  }

  // identifiers of the file by name (comments and strings are not identifiers)
  const identifiers = new Map<string, number>();
  const count = (node: ts.Node): void => {
    if (ts.isIdentifier(node)) identifiers.set(node.text, (identifiers.get(node.text) ?? 0) + 1);
    ts.forEachChild(node, count);
  };
  count(source);
  for (const d of declared) {
    facts.exports.push({
      file,
      name: d.name,
      line: lineOf(d.node),
      typeOnly: d.typeOnly,
      // the declaration is one occurrence, and an `export { a }` list another
      usedInFile: (identifiers.get(d.name) ?? 0) > (ts.isExportSpecifier(d.node) ? 2 : 1),
    });
  }
  return facts;
}

/** For every export of `files`: the files that import it (through index files and `export *` too). */
export function exportUsers(root: string, files: readonly string[]): Map<ExportInfo, Set<string>> {
  const facts = new Map(files.map((f) => [f, factsOf(root, f, readFileSync(join(root, f), 'utf8'))]));
  const users = new Map<string, Set<string>>(); // `file\0name` → importers
  const mark = (file: string, name: string, by: string, seen = new Set<string>()): void => {
    const key = `${file}\u0000${name}`;
    if (seen.has(key)) return;
    seen.add(key);
    const f = facts.get(file);
    if (!f) return;
    if (name === '*') {
      for (const e of f.exports) mark(file, e.name, by, seen);
      for (const r of f.reexports.keys()) mark(file, r, by, seen);
      for (const s of f.star) mark(s, '*', by, seen);
      return;
    }
    if (!users.has(key)) users.set(key, new Set());
    users.get(key)!.add(by);
    const re = f.reexports.get(name);
    if (re) mark(re.from, re.name, by, seen);
    if (!f.exports.some((e) => e.name === name)) for (const s of f.star) mark(s, name, by, seen);
  };
  for (const [file, f] of facts) for (const i of f.imports) for (const name of i.names) mark(i.from, name, file);
  const generatedBy = new Map<string, Set<string>>();
  for (const [file, f] of facts)
    for (const name of f.generated) {
      if (!generatedBy.has(name)) generatedBy.set(name, new Set());
      generatedBy.get(name)!.add(file);
    }
  const out = new Map<ExportInfo, Set<string>>();
  for (const f of facts.values()) {
    for (const e of f.exports) {
      const by = new Set([...(users.get(`${e.file}\u0000${e.name}`) ?? []), ...(generatedBy.get(e.name) ?? [])]);
      by.delete(e.file);
      out.set(e, by);
    }
  }
  return out;
}
