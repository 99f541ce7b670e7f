"""Render: analysed boots for people and tools. Phase tables as text, CSV, Markdown and JSON
(`tables`), bar charts for the terminal and SVG (`svg`), initcall bootgraphs (`bootgraph`),
whole reports in Markdown, HTML, CSV or JSON (`report`; their recommendations,
`recommendations`) and the report of a tune run (`tune_report`), both escaping text and styling
the page with `markup`. Within the core it may import: `analysis`, `board`, `capture`, `files`.
"""
