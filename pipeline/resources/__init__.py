"""Files the pipeline reads, shipped as package data (pipeline.runtime.paths.package_file): the primary-area crosswalk
(pipeline.quality.coverage) and the bundled sample corpus (the build's last default input). In the checkout they are
links to ``data/collections/iclr_primary_areas.csv`` and ``data/sample/iclr2025_seed_abstracts.txt``; a built wheel
holds copies."""
