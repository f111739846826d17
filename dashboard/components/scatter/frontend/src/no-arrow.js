// Stands in for apache-arrow in the bundle (package.json's build: --alias:apache-arrow=./src/no-arrow.js).
// streamlit-component-lib imports these three names for dataframe arguments and dataframe values (its ArrowTable);
// the map sends and takes none (its arguments are JSON and bytes), so apache-arrow (190 KB minified, 45 KB gzip)
// stays out of the bundle. Should the library import another name, esbuild fails the build ("No matching export").
const noDataframes = () => {
  throw new Error("Topic Atlas map: dataframe arguments are not supported (apache-arrow is not bundled)");
};
export const tableFromIPC = noDataframes;
export const tableToIPC = noDataframes;
export const Type = {};
