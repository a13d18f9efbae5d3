// The Chinese site's search summary. Sphinx 8's zh_CN catalog still holds the summary's old
// wording ("found ${resultCount} page(s)"), while its search page asks for the new singular
// and plural pair: without this, the summary under the results was in English. Loaded after
// Sphinx's translations.js; a catalog that already has the pair is left as it is.
(() => {
  const singular = "Search finished, found one page matching the search query.";
  if (typeof Documentation === "undefined" || singular in Documentation.TRANSLATIONS) return;
  const words = "搜索完成，匹配到 ${resultCount} 页。";
  Object.assign(Documentation.TRANSLATIONS, { [singular]: [words, words] });
})();
