// Text into HTML for the pages served beside the API (docs, status, dashboard): the five
// characters that could open markup or end an attribute value.
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}
