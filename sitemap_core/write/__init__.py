"""Writers: entries to bytes (urlset, index, plain text, the HTML view, the feed,
robots.txt). Escaping happens here, once."""
