/**
 * The kit's fields as Salesforce Metadata API source, for `signal-kit crm fields salesforce`: one `CustomObject`
 * document per object listing its `CustomField`s (deploy it as `objects/<Object>.object` with the Metadata API, the
 * Salesforce CLI or a change set). Salesforce's custom fields cannot be created through the REST API the write-back
 * uses, so the kit prints them and a person with "Customize Application" deploys them.
 */
import type { CrmFieldType, CrmObject } from '../writer.ts';

export interface KitField {
  /** The API name, `Signal_Count__c`. */
  name: string;
  label: string;
  type: CrmFieldType;
  /** Text: the longest value (default 255; past 255 a long text area). */
  length?: number;
  /** Numbers: digits after the point (default 0). */
  scale?: number;
  description?: string;
}

const xmlText = (text: string): string =>
  text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');

function typeLines(field: KitField): string[] {
  switch (field.type) {
    case 'number':
      return ['<type>Number</type>', '<precision>18</precision>', `<scale>${field.scale ?? 0}</scale>`];
    case 'date':
      return ['<type>Date</type>'];
    case 'datetime':
      return ['<type>DateTime</type>'];
    case 'boolean':
      return ['<type>Checkbox</type>', '<defaultValue>false</defaultValue>'];
    default: {
      const length = field.length ?? 255;
      return length > 255
        ? ['<type>LongTextArea</type>', `<length>${length}</length>`, '<visibleLines>3</visibleLines>']
        : ['<type>Text</type>', `<length>${length}</length>`];
    }
  }
}

function fieldXml(field: KitField): string {
  const lines = [
    `<fullName>${xmlText(field.name)}</fullName>`,
    `<label>${xmlText(field.label)}</label>`,
    ...(field.description ? [`<description>${xmlText(field.description)}</description>`] : []),
    '<externalId>false</externalId>',
    '<required>false</required>',
    '<trackHistory>false</trackHistory>',
    ...typeLines(field),
  ];
  return ['    <fields>', ...lines.map((l) => `        ${l}`), '    </fields>'].join('\n');
}

/** The `CustomObject` metadata adding `fields` to `object`. */
export function salesforceFieldMetadata(object: CrmObject, fields: KitField[]): string {
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<!-- objects/${object}.object: the signal-kit enrichment fields -->`,
    '<CustomObject xmlns="http://soap.sforce.com/2006/04/metadata">',
    ...fields.map(fieldXml),
    '</CustomObject>',
    '',
  ].join('\n');
}
