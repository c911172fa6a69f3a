/** Parameterized policy templates: the catalog, edge validation, and the builders. */
export { TEMPLATES, findTemplate, templateDefaults, type ParamSpec, type ParamValue, type TemplateParameters, type TemplateSpec } from './catalog.js';
export { validateTemplate } from './validate.js';
export {
  buildTemplateAdmission,
  buildTemplateAutoscale,
  buildTemplateDisaggregation,
  buildTemplateEncode,
  buildTemplatePriority,
  buildTemplateRouting,
  buildTemplateScheduler,
  type PolicyBuildContext,
} from './build.js';
